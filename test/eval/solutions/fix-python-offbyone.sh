sed -i 's/range(1, limit)/range(1, limit + 1)/' report.py
