"""The built-in toolset: geography, weather, currency, flights, calendar, files, units and arithmetic.

Each tool carries generator hints in `meta`: `returns` (a type tag of its output), `tags` (type tags of the
parameters that can take an earlier call's output), `phrase` (a noun phrase for the question) and `sample`
(literal arguments drawn for a fresh question); `effect` marks tools that change the world and report back
a name they were given (so their output is no new value). `HELD_OUT` tools appear only in the unseen split.
"""

from __future__ import annotations

import datetime as dt
import math
import random
from typing import Annotated, Any, Literal

from pydantic import Field

from .toolset import Tool, ToolError, Toolset, tool
from .world import AIRPORTS, CITIES, COUNTRIES, EVENTS, FILES, RATES, World, weather

Unit = Literal["km", "mi", "m", "ft", "kg", "lb", "l", "gal", "celsius", "fahrenheit"]
_UNIT_PAIRS = [
    ("km", "mi"),
    ("mi", "km"),
    ("m", "ft"),
    ("ft", "m"),
    ("kg", "lb"),
    ("lb", "kg"),
    ("l", "gal"),
    ("gal", "l"),
    ("celsius", "fahrenheit"),
    ("fahrenheit", "celsius"),
]
_FACTORS = {("km", "mi"): 0.621371, ("m", "ft"): 3.28084, ("kg", "lb"): 2.20462, ("l", "gal"): 0.264172}

Country = Annotated[str, Field(description="Country name, e.g. 'France'")]
City = Annotated[str, Field(description="City name, e.g. 'Paris'")]
Airport = Annotated[str, Field(description="Three-letter IATA airport code, e.g. 'CDG'")]
Date = Annotated[str, Field(description="ISO date YYYY-MM-DD")]


def _pick(rng: random.Random, pool: Any) -> Any:
    return rng.choice(sorted(pool))


def _country(world: World, country: str) -> tuple[str, str, int, str, str]:
    for name, row in COUNTRIES.items():
        if name.casefold() == country.strip().casefold():
            return row
    raise ToolError(f"unknown country {country!r}")


def _city(city: str) -> tuple[str, float, float, float, str]:
    for name, row in CITIES.items():
        if name.casefold() == city.strip().casefold():
            return row
    raise ToolError(f"unknown city {city!r}")


def _date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text.strip())
    except ValueError as exc:
        raise ToolError(f"not an ISO date: {text!r}") from exc


# ---- geography ---------------------------------------------------------------------------------------------------


@tool(
    returns="city",
    tags={"country": "country"},
    phrase="the capital of {country}",
    sample=lambda r: {"country": _pick(r, COUNTRIES)},
)
def get_capital(world: World, country: Country) -> str:
    """Return the capital city of a country."""
    return _country(world, country)[0]


@tool(
    returns="country",
    tags={"city": "city"},
    phrase="the country in which {city} lies",
    sample=lambda r: {"city": _pick(r, CITIES)},
)
def get_country_of_city(world: World, city: City) -> str:
    """Return the country a city is in."""
    return _city(city)[0]


@tool(
    returns="currency",
    tags={"country": "country"},
    phrase="the currency code of {country}",
    sample=lambda r: {"country": _pick(r, COUNTRIES)},
)
def get_currency(world: World, country: Country) -> str:
    """Return the ISO 4217 currency code used in a country."""
    return _country(world, country)[1]


@tool(
    returns="number",
    tags={"country": "country"},
    phrase="the population of {country}",
    sample=lambda r: {"country": _pick(r, COUNTRIES)},
)
def get_population(world: World, country: Country) -> int:
    """Return the population of a country."""
    return _country(world, country)[2]


@tool(
    returns="text",
    tags={"country": "country"},
    phrase="the continent of {country}",
    sample=lambda r: {"country": _pick(r, COUNTRIES)},
)
def get_continent(world: World, country: Country) -> str:
    """Return the continent a country belongs to."""
    return _country(world, country)[3]


@tool(
    returns="text",
    tags={"country": "country"},
    phrase="the main language of {country}",
    sample=lambda r: {"country": _pick(r, COUNTRIES)},
)
def get_language(world: World, country: Country) -> str:
    """Return the main language spoken in a country."""
    return _country(world, country)[4]


@tool(
    returns="number",
    tags={"city_a": "city", "city_b": "city"},
    phrase="the great-circle distance in km between {city_a} and {city_b}",
    sample=lambda r: dict(zip(("city_a", "city_b"), r.sample(sorted(CITIES), 2), strict=True)),
)
def distance_km(world: World, city_a: City, city_b: City) -> float:
    """Return the great-circle distance between two cities in kilometres, rounded to 1 decimal."""
    _, lat1, lon1, _, _ = _city(city_a)
    _, lat2, lon2, _, _ = _city(city_b)
    p1, p2, dl = math.radians(lat1), math.radians(lat2), math.radians(lon2 - lon1)
    cos = math.sin(p1) * math.sin(p2) + math.cos(p1) * math.cos(p2) * math.cos(dl)
    return round(6371.0 * math.acos(max(-1.0, min(1.0, cos))), 1)


@tool(
    returns="number",
    tags={"city": "city"},
    phrase="the UTC offset in hours of {city}",
    sample=lambda r: {"city": _pick(r, CITIES)},
)
def get_utc_offset(world: World, city: City) -> float:
    """Return a city's offset from UTC in hours (standard time)."""
    return float(_city(city)[3])


# ---- weather -----------------------------------------------------------------------------------------------------


@tool(
    returns="number",
    tags={"city": "city"},
    phrase="the current temperature in {unit} in {city}",
    sample=lambda r: {"city": _pick(r, CITIES), "unit": r.choice(["celsius", "fahrenheit"])},
)
def get_temperature(world: World, city: City, unit: Literal["celsius", "fahrenheit"] = "celsius") -> float:
    """Return the current (simulated) temperature of a city, rounded to 1 decimal."""
    _city(city)
    name = next(n for n in CITIES if n.casefold() == city.strip().casefold())
    celsius = weather(name)[0]
    return celsius if unit == "celsius" else round(celsius * 9 / 5 + 32, 1)


@tool(
    returns="text",
    tags={"city": "city"},
    phrase="the current weather condition in {city}",
    sample=lambda r: {"city": _pick(r, CITIES)},
)
def get_weather_condition(world: World, city: City) -> str:
    """Return the current (simulated) weather condition of a city, e.g. 'sunny'."""
    _city(city)
    name = next(n for n in CITIES if n.casefold() == city.strip().casefold())
    return weather(name)[1]


# ---- flights -----------------------------------------------------------------------------------------------------


@tool(
    returns="airport",
    tags={"city": "city"},
    phrase="the airport code of {city}",
    sample=lambda r: {"city": _pick(r, CITIES)},
)
def get_airport_code(world: World, city: City) -> str:
    """Return the IATA code of a city's main airport."""
    return _city(city)[4]


@tool(
    returns="city",
    tags={"airport_code": "airport"},
    phrase="the city served by airport {airport_code}",
    sample=lambda r: {"airport_code": _pick(r, AIRPORTS)},
)
def get_airport_city(world: World, airport_code: Airport) -> str:
    """Return the city an airport serves."""
    city = AIRPORTS.get(airport_code.strip().upper())
    if city is None:
        raise ToolError(f"unknown airport {airport_code!r}")
    return city


@tool(
    returns="flight",
    tags={"origin": "airport", "destination": "airport"},
    phrase="the id of the cheapest flight from airport {origin} to airport {destination}",
    sample=lambda r: dict(zip(("origin", "destination"), r.sample(sorted(AIRPORTS), 2), strict=True)),
)
def find_cheapest_flight(world: World, origin: Airport, destination: Airport) -> str:
    """Return the id of the cheapest flight between two airports."""
    o, d = origin.strip().upper(), destination.strip().upper()
    options = [(f["price_usd"], fid) for fid, f in world.flights.items() if f["origin"] == o and f["destination"] == d]
    if not options:
        raise ToolError(f"no flights from {origin!r} to {destination!r}")
    return min(options)[1]  # type: ignore[type-var]


def _flight(world: World, flight_id: str) -> dict[str, Any]:
    flight = world.flights.get(flight_id.strip().upper())
    if flight is None:
        raise ToolError(f"unknown flight {flight_id!r}")
    return flight


@tool(
    returns="number",
    tags={"flight_id": "flight"},
    phrase="the price in USD of flight {flight_id}",
    sample=lambda r: {"flight_id": _pick(r, _sample_flights())},
)
def get_flight_price(world: World, flight_id: str) -> float:
    """Return the ticket price of a flight in USD."""
    return float(_flight(world, flight_id)["price_usd"])


@tool(
    returns="number",
    tags={"flight_id": "flight"},
    phrase="the duration in hours of flight {flight_id}",
    sample=lambda r: {"flight_id": _pick(r, _sample_flights())},
)
def get_flight_duration(world: World, flight_id: str) -> float:
    """Return the duration of a flight in hours."""
    return float(_flight(world, flight_id)["duration_h"])


@tool(
    returns="airport",
    tags={"flight_id": "flight"},
    phrase="the destination airport of flight {flight_id}",
    sample=lambda r: {"flight_id": _pick(r, _sample_flights())},
)
def get_flight_destination(world: World, flight_id: str) -> str:
    """Return the destination airport code of a flight."""
    return str(_flight(world, flight_id)["destination"])


# ---- money, units, arithmetic --------------------------------------------------------------------------------------


@tool(
    returns="number",
    tags={"amount": "number", "from_currency": "currency", "to_currency": "currency"},
    phrase="the value of {amount} {from_currency} in {to_currency}",
    sample=lambda r: _sample_currencies(r),
)
def convert_currency(world: World, amount: float, from_currency: str, to_currency: str) -> float:
    """Convert an amount of money between currencies (ISO codes), rounded to 2 decimals."""
    src, dst = from_currency.strip().upper(), to_currency.strip().upper()
    for code in (src, dst):
        if code not in RATES:
            raise ToolError(f"unknown currency {code!r}")
    return round(amount / RATES[src] * RATES[dst], 2)


def _sample_currencies(r: random.Random) -> dict[str, Any]:
    src = r.choice(["USD", _pick(r, RATES)])
    return {"amount": float(r.randint(5, 2000)), "from_currency": src, "to_currency": _pick(r, set(RATES) - {src})}


def _sample_units(r: random.Random) -> dict[str, Any]:
    src, dst = r.choice(_UNIT_PAIRS)
    return {"value": float(r.randint(1, 500)), "from_unit": src, "to_unit": dst}


@tool(
    returns="number",
    tags={"value": "number"},
    phrase="{value} {from_unit} expressed in {to_unit}",
    sample=_sample_units,
)
def convert_units(world: World, value: float, from_unit: Unit, to_unit: Unit) -> float:
    """Convert a quantity between units (length, mass, volume, temperature), rounded to 2 decimals."""
    if from_unit == to_unit:
        return round(value, 2)
    if (from_unit, to_unit) == ("celsius", "fahrenheit"):
        return round(value * 9 / 5 + 32, 2)
    if (from_unit, to_unit) == ("fahrenheit", "celsius"):
        return round((value - 32) * 5 / 9, 2)
    if (from_unit, to_unit) in _FACTORS:
        return round(value * _FACTORS[(from_unit, to_unit)], 2)
    if (to_unit, from_unit) in _FACTORS:
        return round(value / _FACTORS[(to_unit, from_unit)], 2)
    raise ToolError(f"cannot convert {from_unit} to {to_unit}")


@tool(
    returns="number",
    tags={"a": "number", "b": "number"},
    phrase="{a} multiplied by {b}",
    sample=lambda r: {"a": float(r.randint(2, 99)), "b": float(r.randint(2, 12))},
)
def multiply(world: World, a: float, b: float) -> float:
    """Multiply two numbers (result rounded to 4 decimals)."""
    return round(a * b, 4)


@tool(
    returns="number",
    tags={"a": "number", "b": "number"},
    phrase="the sum of {a} and {b}",
    sample=lambda r: {"a": float(r.randint(1, 999)), "b": float(r.randint(1, 999))},
)
def add_numbers(world: World, a: float, b: float) -> float:
    """Add two numbers (result rounded to 4 decimals)."""
    return round(a + b, 4)


@tool(
    returns="number",
    tags={"value": "number"},
    phrase="{value} rounded to {digits} decimal places",
    sample=lambda r: {"value": round(r.uniform(1, 1000), 3), "digits": r.randint(0, 1)},
)
def round_number(world: World, value: float, digits: Annotated[int, Field(ge=0, le=6)]) -> float:
    """Round a number to a given count of decimal places."""
    return float(round(value, digits))


# ---- calendar ----------------------------------------------------------------------------------------------------


@tool(
    returns="date",
    tags={"event": "event"},
    phrase="the date of the event {event}",
    sample=lambda r: {"event": _pick(r, EVENTS)},
)
def get_event_date(world: World, event: Annotated[str, Field(description="Event name, e.g. 'hackathon'")]) -> str:
    """Return the ISO date of a calendar event."""
    date = world.calendar.get(event.strip().lower())
    if date is None:
        raise ToolError(f"no event named {event!r}")
    return date


@tool(
    returns="event",
    tags={"date": "date"},
    effect=True,
    phrase="the name of the event '{event}' once it is scheduled on {date}",
    sample=lambda r: {
        "event": r.choice(["dentist", "team lunch", "code review", "flight home"]),
        "date": f"2025-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}",
    },
)
def schedule_event(world: World, event: str, date: Date) -> str:
    """Put an event in the calendar on a date (replacing an event of the same name) and return its name."""
    name = event.strip().lower()
    if not name:
        raise ToolError("event name must not be empty")
    world.calendar[name] = _date(date).isoformat()
    return name


@tool(
    returns="number",
    tags={"date": "date"},
    phrase="the number of days from today until {date}",
    sample=lambda r: {"date": f"2025-{r.randint(2, 12):02d}-{r.randint(1, 28):02d}"},
)
def days_until(world: World, date: Date) -> int:
    """Return the number of days from today (the calendar's current date) until a date; negative if past."""
    return (_date(date) - world.today).days


@tool(
    returns="date",
    tags={"date": "date"},
    phrase="the date {days} days after {date}",
    sample=lambda r: {"date": f"2025-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}", "days": r.randint(1, 60)},
)
def add_days(world: World, date: Date, days: int) -> str:
    """Return the ISO date a number of days after a date (negative days go back)."""
    return (_date(date) + dt.timedelta(days=days)).isoformat()


@tool(
    returns="text",
    tags={"date": "date"},
    phrase="the weekday of {date}",
    sample=lambda r: {"date": f"2025-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}"},
)
def get_weekday(world: World, date: Date) -> str:
    """Return the English weekday name of an ISO date."""
    return _date(date).strftime("%A")


# ---- files -------------------------------------------------------------------------------------------------------


@tool(
    returns="path",
    tags={},
    phrase="the path of the file whose name contains '{keyword}'",
    sample=lambda r: {"keyword": r.choice(["todo", "poem", "q1", "q2", "readme"])},
)
def find_file(world: World, keyword: str) -> str:
    """Return the path of the first file (alphabetically) whose path contains a keyword."""
    matches = sorted(p for p in world.files if keyword.strip().lower() in p.lower())
    if not matches:
        raise ToolError(f"no file matches {keyword!r}")
    return matches[0]


@tool(
    returns="text",
    tags={"path": "path"},
    phrase="the contents of the file {path}",
    sample=lambda r: {"path": _pick(r, FILES)},
)
def read_file(world: World, path: str) -> str:
    """Return the text of a file."""
    if path not in world.files:
        raise ToolError(f"no such file {path!r}")
    return world.files[path]


@tool(
    returns="path",
    tags={"content": "text"},
    effect=True,
    phrase="the path of the file {path} after writing {content} to it",
    sample=lambda r: {"path": f"/tmp/note{r.randint(1, 99)}.txt", "content": r.choice(["hello world", "done"])},
)
def write_file(world: World, path: str, content: str) -> str:
    """Write text to a file (overwriting it) and return its path."""
    if not path.startswith("/"):
        raise ToolError("paths must be absolute")
    world.files[path] = content
    return path


@tool(
    returns="number",
    tags={"text": "text"},
    phrase="the number of words in {text}",
    sample=lambda r: {"text": r.choice(["one two three", "a quick test of words", "hello"])},
)
def count_words(world: World, text: str) -> int:
    """Count the whitespace-separated words of a text."""
    return len(text.split())


_FLIGHT_SAMPLE: list[str] = []


def _sample_flights() -> list[str]:
    if not _FLIGHT_SAMPLE:
        from .world import FLIGHTS

        _FLIGHT_SAMPLE.extend(sorted(FLIGHTS)[::37])
    return _FLIGHT_SAMPLE


ALL_TOOLS: list[Tool] = [
    get_capital,
    get_country_of_city,
    get_currency,
    get_population,
    get_continent,
    get_language,
    distance_km,
    get_utc_offset,
    get_temperature,
    get_weather_condition,
    get_airport_code,
    get_airport_city,
    find_cheapest_flight,
    get_flight_price,
    get_flight_duration,
    get_flight_destination,
    convert_currency,
    convert_units,
    multiply,
    add_numbers,
    round_number,
    get_event_date,
    schedule_event,
    days_until,
    add_days,
    get_weekday,
    find_file,
    read_file,
    write_file,
    count_words,
]
#: Tools seen only in the unseen split (DepthBench keeps validation tools disjoint from training tools).
HELD_OUT = frozenset(
    {"get_continent", "get_language", "distance_km", "get_utc_offset", "get_weekday", "get_flight_duration"}
)


def default_toolset() -> Toolset:
    return Toolset(ALL_TOOLS, World)
