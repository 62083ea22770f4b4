x = 1  # TODO: name this better
