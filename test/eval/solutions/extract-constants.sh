printf 'module.exports = { TAX_RATE: 0.2, SHIPPING: 5 };\n' > constants.js
printf "const { TAX_RATE, SHIPPING } = require('./constants.js');\n\nfunction total(price) {\n  return price + price * TAX_RATE + SHIPPING;\n}\n\nconsole.log(total(100));\n" > app.js
