grep -c ' ERROR ' logs/app.log > answer.txt
