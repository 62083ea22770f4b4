printf 'QUESTION: util.js has two functions, add and scale: which one?\n' > answer.txt
