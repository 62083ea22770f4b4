function perimeterOfSquare(side) {
  return 4 * side;
}

function discSurface(r) {
  return Math.PI * r * r;
}

function hypotenuse(a, b) {
  return Math.sqrt(a * a + b * b);
}

module.exports = { perimeterOfSquare, discSurface, hypotenuse };
