printf '3.14.2\n' > answer.txt
