def area(size):
  	result = size * size
  	return result


if __name__ == "__main__":
    print(area(-3))
    print(area(3))
