def f():
    pass  # TODO remove
