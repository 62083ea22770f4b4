printf 'day1: 45\nday2: 68\nday3: 67\nday4: 63\nday5: 75\nday6: 77\n' > answer.txt
