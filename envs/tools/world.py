"""The simulated world behind the tools: small in-memory tables (geography, weather, currencies, flights,
calendar, files). Values are fixed so that tasks are reproducible; weather is simulated, not live.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass, field

# country: (capital, currency, population, continent, language)
COUNTRIES: dict[str, tuple[str, str, int, str, str]] = {
    "France": ("Paris", "EUR", 68_170_000, "Europe", "French"),
    "Germany": ("Berlin", "EUR", 84_480_000, "Europe", "German"),
    "Italy": ("Rome", "EUR", 58_850_000, "Europe", "Italian"),
    "Spain": ("Madrid", "EUR", 48_350_000, "Europe", "Spanish"),
    "United Kingdom": ("London", "GBP", 68_350_000, "Europe", "English"),
    "Switzerland": ("Bern", "CHF", 8_850_000, "Europe", "German"),
    "Norway": ("Oslo", "NOK", 5_520_000, "Europe", "Norwegian"),
    "Sweden": ("Stockholm", "SEK", 10_550_000, "Europe", "Swedish"),
    "Poland": ("Warsaw", "PLN", 36_690_000, "Europe", "Polish"),
    "Japan": ("Tokyo", "JPY", 124_500_000, "Asia", "Japanese"),
    "China": ("Beijing", "CNY", 1_410_000_000, "Asia", "Chinese"),
    "India": ("New Delhi", "INR", 1_428_000_000, "Asia", "Hindi"),
    "South Korea": ("Seoul", "KRW", 51_710_000, "Asia", "Korean"),
    "United States": ("Washington", "USD", 334_900_000, "North America", "English"),
    "Canada": ("Ottawa", "CAD", 40_100_000, "North America", "English"),
    "Mexico": ("Mexico City", "MXN", 128_500_000, "North America", "Spanish"),
    "Brazil": ("Brasilia", "BRL", 216_400_000, "South America", "Portuguese"),
    "Argentina": ("Buenos Aires", "ARS", 46_650_000, "South America", "Spanish"),
    "Australia": ("Canberra", "AUD", 26_640_000, "Oceania", "English"),
    "Egypt": ("Cairo", "EGP", 112_700_000, "Africa", "Arabic"),
    "Kenya": ("Nairobi", "KES", 55_100_000, "Africa", "Swahili"),
    "South Africa": ("Pretoria", "ZAR", 60_410_000, "Africa", "English"),
}

# city: (country, latitude, longitude, utc offset hours, airport code)
CITIES: dict[str, tuple[str, float, float, float, str]] = {
    "Paris": ("France", 48.857, 2.352, 1, "CDG"),
    "Lyon": ("France", 45.764, 4.836, 1, "LYS"),
    "Berlin": ("Germany", 52.520, 13.405, 1, "BER"),
    "Munich": ("Germany", 48.135, 11.582, 1, "MUC"),
    "Rome": ("Italy", 41.903, 12.496, 1, "FCO"),
    "Milan": ("Italy", 45.464, 9.190, 1, "MXP"),
    "Madrid": ("Spain", 40.417, -3.704, 1, "MAD"),
    "Barcelona": ("Spain", 41.385, 2.173, 1, "BCN"),
    "London": ("United Kingdom", 51.507, -0.128, 0, "LHR"),
    "Manchester": ("United Kingdom", 53.481, -2.243, 0, "MAN"),
    "Bern": ("Switzerland", 46.948, 7.447, 1, "BRN"),
    "Zurich": ("Switzerland", 47.377, 8.541, 1, "ZRH"),
    "Oslo": ("Norway", 59.914, 10.752, 1, "OSL"),
    "Stockholm": ("Sweden", 59.329, 18.069, 1, "ARN"),
    "Warsaw": ("Poland", 52.230, 21.012, 1, "WAW"),
    "Tokyo": ("Japan", 35.676, 139.650, 9, "HND"),
    "Osaka": ("Japan", 34.694, 135.502, 9, "KIX"),
    "Beijing": ("China", 39.904, 116.407, 8, "PEK"),
    "Shanghai": ("China", 31.230, 121.474, 8, "PVG"),
    "New Delhi": ("India", 28.614, 77.209, 5.5, "DEL"),
    "Mumbai": ("India", 19.076, 72.878, 5.5, "BOM"),
    "Seoul": ("South Korea", 37.567, 126.978, 9, "ICN"),
    "Washington": ("United States", 38.907, -77.037, -5, "IAD"),
    "New York": ("United States", 40.713, -74.006, -5, "JFK"),
    "Chicago": ("United States", 41.878, -87.630, -6, "ORD"),
    "Ottawa": ("Canada", 45.422, -75.697, -5, "YOW"),
    "Toronto": ("Canada", 43.653, -79.383, -5, "YYZ"),
    "Mexico City": ("Mexico", 19.433, -99.133, -6, "MEX"),
    "Brasilia": ("Brazil", -15.794, -47.882, -3, "BSB"),
    "Sao Paulo": ("Brazil", -23.551, -46.633, -3, "GRU"),
    "Buenos Aires": ("Argentina", -34.604, -58.382, -3, "EZE"),
    "Canberra": ("Australia", -35.281, 149.130, 10, "CBR"),
    "Sydney": ("Australia", -33.869, 151.209, 10, "SYD"),
    "Cairo": ("Egypt", 30.044, 31.236, 2, "CAI"),
    "Nairobi": ("Kenya", -1.292, 36.822, 3, "NBO"),
    "Pretoria": ("South Africa", -25.747, 28.229, 2, "PRY"),
    "Cape Town": ("South Africa", -33.925, 18.424, 2, "CPT"),
}

# units per 1 USD
RATES: dict[str, float] = {
    "USD": 1.0,
    "EUR": 0.92,
    "GBP": 0.79,
    "CHF": 0.88,
    "NOK": 10.6,
    "SEK": 10.4,
    "PLN": 3.95,
    "JPY": 151.0,
    "CNY": 7.2,
    "INR": 83.3,
    "KRW": 1350.0,
    "CAD": 1.36,
    "MXN": 17.1,
    "BRL": 5.0,
    "ARS": 870.0,
    "AUD": 1.52,
    "EGP": 47.0,
    "KES": 130.0,
    "ZAR": 18.6,
}

CONDITIONS = ("sunny", "cloudy", "rainy", "windy", "snowy", "foggy")

EVENTS: dict[str, str] = {
    "product launch": "2025-03-14",
    "team offsite": "2025-04-22",
    "board meeting": "2025-05-06",
    "summer party": "2025-07-18",
    "budget review": "2025-09-30",
    "hackathon": "2025-10-11",
    "annual conference": "2025-11-20",
    "year-end retreat": "2025-12-12",
}

FILES: dict[str, str] = {
    "/notes/todo.txt": "buy milk call the bank book flights to Oslo",
    "/notes/poem.txt": "the quick brown fox jumps over the lazy dog again and again",
    "/reports/q1.txt": "revenue grew by twelve percent in the first quarter",
    "/reports/q2.txt": "costs fell while revenue stayed flat during the second quarter of the year",
    "/readme.md": "welcome to the shared drive",
}


def _unit_hash(*parts: str) -> int:
    """Stable small integer from strings (never Python's salted hash)."""
    return int(hashlib.sha256("|".join(parts).encode()).hexdigest()[:8], 16)


def weather(city: str) -> tuple[float, str]:
    """A city's (temperature in °C, condition): hashed from its name and latitude, so every run sees the same."""
    h = _unit_hash("weather", city)
    lat = abs(CITIES[city][1])
    temperature = round(32.0 - lat * 0.45 + (h % 70) / 10.0, 1)
    condition = CONDITIONS[(h // 70) % len(CONDITIONS)]
    if condition == "snowy" and temperature > 2.0:
        condition = "cloudy"
    return temperature, condition


def _flights() -> dict[str, dict[str, object]]:
    """A deterministic flight table: for each ordered airport pair, two or three flights at different prices."""
    out: dict[str, dict[str, object]] = {}
    codes = sorted(c[4] for c in CITIES.values())
    for origin in codes:
        for destination in codes:
            if origin == destination:
                continue
            h = _unit_hash("flight", origin, destination)
            for k in range(2 + h % 2):
                flight_id = f"{origin}{destination}{100 + (h + 37 * k) % 900}"
                price = round(80 + (h >> (k + 3)) % 1200 + 0.99, 2)
                out[flight_id] = {
                    "origin": origin,
                    "destination": destination,
                    "price_usd": price,
                    "duration_h": round(1 + (h >> (k + 7)) % 160 / 10, 1),
                }
    return out


@dataclass
class World:
    """Mutable per-episode state; the tables above are the initial contents."""

    files: dict[str, str] = field(default_factory=lambda: dict(FILES))
    calendar: dict[str, str] = field(default_factory=lambda: dict(EVENTS))
    today: dt.date = dt.date(2025, 1, 15)

    @property
    def flights(self) -> dict[str, dict[str, object]]:
        """Read-only and shared (not copied per episode)."""
        return FLIGHTS


FLIGHTS = _flights()
AIRPORTS: dict[str, str] = {info[4]: city for city, info in CITIES.items()}
