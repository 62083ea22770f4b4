sed -i 's/^def area(size):$/def area(size):\n  \tif size < 0:\n  \t    return 0/' shapes.py
