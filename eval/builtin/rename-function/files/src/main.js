const { greet } = require('./greet.js');
const { getUserName } = require('./users.js');

console.log(greet(1));
console.log(getUserName(2));
