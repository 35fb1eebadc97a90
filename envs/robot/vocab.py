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
    "helmet", "camera", "keyboard",
)  # fmt: skip
OPENINGS = ("Hello everyone", "Attention please", "Good news", "Quick reminder", "Hi there", "Excuse me")
NEWS = (
    "the meeting starts in ten minutes", "lunch is ready", "please water the plants", "the fire drill is at noon",
    "a package has arrived", "the printer is fixed", "welcome to the team", "the coffee machine is empty",
    "the elevator is out of order", "the parking lot closes early today", "cake is in the break area",
    "the wifi password has changed", "the bus leaves at five", "the heating will be off tonight",
    "visitors are arriving soon", "the library closes at six", "please lock the doors", "the talk was moved",
    "the windows will be cleaned", "the report is due tomorrow",
)  # fmt: skip
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
