sed -i 's/getUserName/fetchUserName/g' src/*.js
