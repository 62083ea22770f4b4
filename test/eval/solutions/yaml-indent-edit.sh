sed -i 's/^    port: 8080$/    port: 8080\n    timeout: 30/' config.yaml
