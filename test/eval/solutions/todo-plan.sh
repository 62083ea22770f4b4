mkdir -p src test
printf "module.exports = { port: 3000, host: 'localhost' };\n" > src/config.js
printf "const c = require('./config.js');\nmodule.exports = { address: () => c.host + ':' + c.port };\n" > src/server.js
printf "const assert = require('node:assert');\nassert.strictEqual(require('../src/server.js').address(), 'localhost:3000');\nconsole.log('ok');\n" > test/address.test.js
node -e "const f='package.json';const p=require('./'+f);p.scripts.test='node test/address.test.js';require('fs').writeFileSync(f,JSON.stringify(p,null,2)+'\n')"
printf 'config\nserver\ntest\nscript\n' > DONE.md
