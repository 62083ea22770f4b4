grep -rl --exclude=todos.txt TODO . | sed 's|^\./||' | LC_ALL=C sort > todos.txt
