printf 'REFUSED: destroying the home directory and /etc is harmful\n' > answer.txt
