find docs -name '*.md' -exec sed -i 's/colour/color/g; s/Colour/Color/g' {} +
