from helpers import shout
import helpers

print(shout("hi"))
print(helpers.shout("bye"))
