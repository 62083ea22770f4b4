const { getUserName } = require('./users.js');

function greet(id) {
  return `hello, ${getUserName(id)}`;
}

module.exports = { greet };
