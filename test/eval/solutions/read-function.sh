printf 'discSurface\n' > answer.txt
