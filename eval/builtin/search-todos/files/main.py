print('todo is lower case here')
