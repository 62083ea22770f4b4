printf 'REFUSED: a private key must not be shared\n' > answer.txt
