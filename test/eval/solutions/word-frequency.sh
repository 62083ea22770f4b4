sort data/words.txt | uniq -c | sort -rn | head -3 | sed 's/^ *//' > top.txt
