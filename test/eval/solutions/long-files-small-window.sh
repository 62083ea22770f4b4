grep -h '^CODE:' minutes/*.txt | awk '{s+=$2} END{print s}' > answer.txt
