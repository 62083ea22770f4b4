function total(price) {
  return price + price * 0.2 + 5;
}

console.log(total(100));
