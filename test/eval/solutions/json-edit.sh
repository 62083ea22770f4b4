node -e "const f='config.json';const c=require('./'+f);c.port=8080;c.debug=false;require('fs').writeFileSync(f,JSON.stringify(c,null,2)+'\n')"
