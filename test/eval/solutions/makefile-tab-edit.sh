sed -i 's/cc -o app/cc -O2 -o app/' Makefile
