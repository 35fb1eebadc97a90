"""Words our generated robot tasks are built from (the project's own lists, nothing from RoboEval).

No room name, object label or person name is a substring of another of its kind, because the simulator matches
state names as regexes inside the program's arguments (`tests/robot` checks this).
"""

from __future__ import annotations

ROOMS = (
    "kitchen", "library", "mail room", "lounge", "conference room", "workshop", "garage", "gym", "studio",
    "pantry", "archive", "cafeteria", "reception", "laundry room", "greenhouse", "server room", "storage closet",
    "music room", "art room", "nursery", "print shop", "supply depot", "break area", "lecture hall",
)  # fmt: skip
PEOPLE = (
    "Alice", "Bruno", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hana", "Ivan", "Jun", "Kofi", "Lena", "Mateo",
    "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Sven", "Tara", "Vera", "Wen", "Yusuf", "Zoe",
)  # fmt: skip
OBJECTS = (
    "stapler", "umbrella", "notebook", "flashlight", "mug", "charger", "backpack", "water bottle", "tape measure",
    "first aid kit", "calculator", "headphones", "scissors", "clipboard", "extension cord", "toolbox", "lamp",
    "helmet", "camera", "keyboard", "whiteboard marker", "thermos", "binder", "projector remote", "yoga mat",
    "sketchbook", "power bank", "desk fan", "paper towel roll", "label maker",
)  # fmt: skip
OPENINGS = ("Hello everyone", "Attention please", "Good news", "Quick reminder", "Hi there", "Excuse me")
NEWS = (
    "the meeting starts in {n} minutes", "lunch is ready in {n} minutes", "please water the plants on floor {n}",
    "the fire drill is at {h} o'clock", "a package for {p} has arrived", "the printer on floor {n} is fixed",
    "please welcome {p} to the team", "the coffee machine on floor {n} is empty", "{p} is waiting in the lobby",
    "the elevator is out of order until {h} o'clock", "there are {n} slices of cake left", "{p} has a birthday today",
    "the wifi password has changed", "the bus leaves at {h} o'clock", "the heating will be off for {n} hours",
    "{n} visitors are arriving soon", "the library closes at {h} o'clock", "please lock the doors by {h} o'clock",
    "the talk by {p} was moved", "the report from {p} is due tomorrow", "{p} is looking for a charger",
    "room {n} is free this afternoon", "{p} will be late by {n} minutes",
)  # fmt: skip
COLOURS = ("red", "blue", "green", "yellow", "black", "white", "orange", "purple", "grey", "silver")
DONE_LINES = ("I am back", "task complete", "all done", "mission accomplished", "message delivered")
CHOICES = (
    ("coffee", "tea"), ("lemonade", "iced tea"), ("sandwich", "salad"), ("apple", "banana"), ("cookie", "muffin"),
    ("soup", "noodles"), ("pencil", "marker"), ("blanket", "pillow"),
)  # fmt: skip
CATEGORIES: dict[str, tuple[str, ...]] = {
    "fruit": ("apple", "banana", "orange", "grape", "mango", "pear", "peach", "cherry", "strawberry", "kiwi",
              "lemon", "pineapple", "plum", "watermelon", "apricot", "blueberry", "raspberry"),
    "colour": ("red", "blue", "green", "yellow", "purple", "orange", "pink", "black", "white", "brown", "grey",
               "gray", "violet", "turquoise"),
    "hot drink": ("coffee", "tea", "cocoa", "hot chocolate", "chai", "latte", "espresso", "cappuccino",
                  "herbal tea", "green tea", "mocha"),
    "sport": ("soccer", "football", "tennis", "basketball", "baseball", "swimming", "cycling", "running", "golf",
              "hockey", "volleyball", "cricket", "rugby", "skiing", "badminton"),
    "musical instrument": ("piano", "guitar", "violin", "drums", "flute", "trumpet", "cello", "saxophone", "harp",
                           "clarinet", "ukulele", "bass", "trombone"),
    "planet": ("mercury", "venus", "earth", "mars", "jupiter", "saturn", "uranus", "neptune"),
    "season": ("spring", "summer", "autumn", "fall", "winter"),
    "pizza topping": ("cheese", "pepperoni", "mushroom", "mushrooms", "olives", "peppers", "onion", "onions",
                      "ham", "pineapple", "basil", "tomato", "sausage", "spinach"),
}  # fmt: skip
