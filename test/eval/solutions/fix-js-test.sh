sed -i 's|/\[^a-z0-9\]+/,|/[^a-z0-9]+/g,|' src/slug.js
