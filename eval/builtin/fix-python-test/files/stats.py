def median(values):
    """The middle value of a list of numbers; the mean of the two middle ones for an even count."""
    ordered = sorted(values)
    n = len(ordered)
    mid = n // 2
    if n % 2 == 1:
        return ordered[mid]
    return (ordered[mid] + ordered[mid + 1]) / 2
