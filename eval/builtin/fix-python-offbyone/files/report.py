def numbers(limit):
    return [n for n in range(1, limit)]


if __name__ == "__main__":
    for n in numbers(10):
        print(n)
