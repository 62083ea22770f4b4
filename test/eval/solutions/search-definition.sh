printf 'src/db/util.js\n' > answer.txt
