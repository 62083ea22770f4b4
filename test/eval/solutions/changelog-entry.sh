sed -i 's/^- Added dark mode.$/- Added dark mode.\n- Fixed the crash on empty input./' CHANGELOG.md
