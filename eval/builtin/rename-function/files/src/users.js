function getUserName(id) {
  return id === 1 ? 'ada' : 'guest';
}

module.exports = { getUserName };
