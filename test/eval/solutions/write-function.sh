printf "function isPalindrome(t) {\n  const s = t.toLowerCase().replace(/[^a-z0-9]/g, '');\n  return s === [...s].reverse().join('');\n}\nmodule.exports = { isPalindrome };\n" > pal.js
