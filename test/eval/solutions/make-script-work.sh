sed -i 's/\*\.text/*.txt/' run.sh
