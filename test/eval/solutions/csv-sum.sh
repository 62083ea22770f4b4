awk -F, '$1=="north"{s+=$3} END{print s}' sales.csv > total.txt
