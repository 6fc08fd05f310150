"""How the Spanish pages write numbers, for every operation's generated tables: a decimal comma,
digits not grouped (4242; 506,3), and a no-break space between a number and its unit."""

NBSP = "\u00a0"


def es_number(x: float, decimals: int) -> str:
    """A number as a Spanish text writes it: decimal comma, digits not grouped (4242; 506,3)."""
    return f"{x:.{decimals}f}".replace(".", ",")
