sed -i 's/ordered\[mid\] + ordered\[mid + 1\]/ordered[mid - 1] + ordered[mid]/' stats.py
