function add(a, b) {
  return a + b;
}

function scale(a, k) {
  return a * k;
}

module.exports = { add, scale };
