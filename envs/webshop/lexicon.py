"""Shop vocabulary: WebShop's colour and size vocabularies (upstream `engine/normalize.py`, verbatim), its five
top-level categories with an attribute set per category, 100+ product types, and the option values products offer.

A product type plays the part of WebShop's `query` (the search that scraped the item). Each type names its head
nouns (the lexicon noun extractor's ground truth for title scores), an attribute pool in WebShop's TF-IDF bigram
style, its option dimensions and a price range. Everything here is data; `catalog.py` draws from it with a seeded RNG.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# WebShop's `normalize.COLOR_SET`, 102 entries in upstream order. Order matters: `normalize_color` returns the first
# entry that is a substring ("navy blue" -> "blue", "standard" -> "tan", "light grey" -> "grey").
COLOR_SET = (
    "alabaster", "apricot", "aqua", "ash", "asphalt", "azure",
    "banana", "beige", "black", "blue", "blush", "bordeaux", "bronze",
    "brown", "burgundy", "camel", "camo", "caramel", "champagne",
    "charcoal", "cheetah", "chestnut", "chocolate", "christmas", "coffee",
    "cognac", "copper", "coral", "cranberry", "cream", "crystal", "dark",
    "denim", "eggplant", "elephant", "espresso", "fuchsia", "gold", "granite",
    "grape", "graphite", "grass", "gray", "green", "grey", "heather", "indigo",
    "ivory", "ivy", "khaki", "lavender", "lemon", "leopard", "light", "lilac",
    "lime", "magenta", "maroon", "mauve", "merlot", "midnight", "mint", "mocha",
    "multicolor", "mushroom", "mustard", "natural", "navy", "nude", "olive",
    "orange", "peach", "pewter", "pink", "plum", "purple", "rainbow", "red",
    "rose", "royal", "rust", "sand", "sapphire", "seashell", "silver", "skull",
    "slate", "steel", "stone", "stonewash", "sunflower", "tan", "taupe", "teal",
    "tiger", "turquoise", "violet", "walnut", "wheat", "white", "wine", "yellow",
)  # fmt: skip

# WebShop's `normalize.SIZE_SET` and `SIZE_PATTERNS` (upstream order; the set's entries come first as patterns).
SIZE_SET = (
    "xx-large", "3x-large", "4x-large", "5x-large", "x-large", "x-small",
    "medium", "large", "small",
    "queen", "twin", "full", "king", "one size",
    "pack",
)  # fmt: skip
SIZE_PATTERNS = tuple(re.compile(s) for s in SIZE_SET) + tuple(
    re.compile(p)
    for p in (
        r"(.*)neck(.*)sleeve", r"(.*) women \| (.*) men", r"(.*)w x(.*)l", r"(.*)w by (.*)l", r"(.*)w x(.*)h",
        r"(.*)wide", r"(.*)x-wide", r"(.*)narrow", r"(.*)petite", r"(.*)inch", r"(.*)plus", r"(.*)mm",
        r"women(.*)", r"(.*)x(.*)", r"(.*)ft", r"(.*)feet", r"(.*)meter", r"(.*)yards", r"(.*)\*(.*)",
        r"(.*)\-(.*)", r'(\d+)"$', r"(\d+)f$", r"(\d+)m$", r"(\d+)cm$", r"(\d+)g$",
    )
)  # fmt: skip


def is_size(value: str) -> bool:
    """Whether a value reads as a size to the original's patterns: some `SIZE_PATTERNS` entry matches it."""
    return any(p.search(value) for p in SIZE_PATTERNS)


# ---- option values: what products offer, per option vocabulary (display name, values) ----------------------------
# Colours are WebShop-style option strings built on COLOR_SET words (compound names and "a | b" pairs, the original's
# '/' -> ' | ' rewrite); sizes follow SIZE_SET / SIZE_PATTERNS. `catalog.distinct_values` keeps no two values a
# product offers that the reward's option matching confuses.
_COLORS = (
    "black", "white", "navy blue", "light grey", "dark grey", "charcoal", "red", "wine red", "burgundy", "maroon",
    "pink", "blush", "fuchsia", "coral", "peach", "orange", "rust", "mustard", "yellow", "lemon", "lime", "olive green",
    "army green", "mint", "teal", "turquoise", "aqua", "sky blue", "royal blue", "indigo", "sapphire", "denim", "purple",
    "lavender", "lilac", "mauve", "plum", "violet", "magenta", "beige", "khaki", "tan", "camel", "taupe", "sand",
    "cream", "ivory", "alabaster", "champagne", "brown", "chocolate", "coffee", "espresso", "mocha", "chestnut",
    "cognac", "caramel", "walnut", "natural", "gold", "rose gold", "silver", "bronze", "copper", "pewter", "graphite",
    "slate", "steel", "stone", "leopard", "cheetah", "camo", "multicolor", "rainbow", "black | white", "white | blue",
    "grey | pink", "heather grey", "apricot", "azure", "cranberry", "eggplant", "granite", "seashell", "wheat",
)  # fmt: skip
_CLOTHING_SIZES = ("x-small", "small", "medium", "large", "x-large", "xx-large", "3x-large", "4x-large", "5x-large")
_SHOE_SIZES = (
    "5", "5.5", "6", "6.5", "7", "7.5", "8", "8.5", "9", "9.5", "10", "10.5", "11", "11.5", "12", "13",
    "7 wide", "8 wide", "9 wide", "10 wide", "7 narrow", "8 narrow",
)  # fmt: skip
_BED_SIZES = ("twin", "twin xl", "full", "queen", "king", "california king")
_PACKS = ("pack of 1", "pack of 2", "pack of 3", "pack of 4", "pack of 6", "pack of 8", "pack of 12", "pack of 24")
_COUNTS = ("6 count", "12 count", "18 count", "24 count", "36 count", "48 count", "100 count")
_VOLUMES = (
    "1 fl oz",
    "1.7 fl oz",
    "2 fl oz",
    "3.4 fl oz",
    "6.7 fl oz",
    "8 fl oz",
    "12 fl oz",
    "16.9 fl oz",
    "33.8 fl oz",
)
_WEIGHTS = ("2 ounce", "3.5 ounce", "5 ounce", "8 ounce", "12 ounce", "1 pound", "2 pound", "3 pound", "5 pound")
_FLAVORS = (
    "vanilla", "chocolate", "strawberry", "mango", "cinnamon", "coconut", "caramel", "peanut butter", "honey",
    "sea salt", "original", "cookies and cream", "salted caramel", "matcha", "raspberry", "cherry", "apple",
    "banana nut", "pumpkin spice", "hazelnut", "mixed berry", "unflavored", "spicy", "barbecue", "sour cream",
)  # fmt: skip
_SCENTS = (
    "lavender", "eucalyptus", "citrus", "sandalwood", "jasmine", "unscented", "cedarwood", "vanilla", "rose",
    "tea tree", "coconut", "fresh linen", "ocean breeze", "peppermint", "lemongrass", "bergamot",
)  # fmt: skip
_CAPACITIES = ("16gb", "32gb", "64gb", "128gb", "256gb", "512gb", "1tb", "2tb", "4tb")
_LENGTHS = ("1 ft", "3 ft", "6 ft", "10 ft", "15 ft", "25 ft", "50 ft", "100 ft")
_SCREENS = ("10 inch", "13 inch", "14 inch", "15.6 inch", "17 inch", "21.5 inch", "24 inch", "27 inch", "32 inch")
_DIMENSIONS = ("2' x 3'", "3' x 5'", "4' x 6'", "5' x 7'", "6' x 9'", "8' x 10'", "9' x 12'")
_PANELS = ("42w x 63l", "42w x 84l", "52w x 63l", "52w x 84l", "52w x 95l", "52w x 108l")
_MATERIALS = ("oak", "walnut", "pine", "bamboo", "metal", "glass", "marble", "rattan", "velvet", "linen", "leather")
_STYLES = (
    "modern", "classic", "farmhouse", "industrial", "mid century", "bohemian", "minimalist", "rustic",
    "scandinavian", "traditional", "contemporary", "coastal",
)  # fmt: skip
_PATTERNS = ("floral", "striped", "plaid", "solid", "geometric", "paisley", "polka dot", "animal print", "tie dye")
_CONNECTORS = ("usb-c", "lightning", "micro usb", "usb-a")
_WATTS = ("20w", "30w", "45w", "65w", "100w", "140w")

# key -> (option name shown on the page and in goals, values). The names are the original's most common ones.
OPTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "color": ("color", _COLORS),
    "size": ("size", _CLOTHING_SIZES),
    "shoe": ("size", _SHOE_SIZES),
    "bed": ("size", _BED_SIZES),
    "pack": ("size", _PACKS),
    "count": ("size", _COUNTS),
    "volume": ("size", _VOLUMES),
    "weight": ("size", _WEIGHTS),
    "screen": ("size", _SCREENS),
    "rug": ("size", _DIMENSIONS),
    "panel": ("size", _PANELS),
    "length": ("size", _LENGTHS),
    "capacity": ("capacity", _CAPACITIES),
    "flavor": ("flavor name", _FLAVORS),
    "scent": ("scent", _SCENTS),
    "material": ("material", _MATERIALS),
    "style": ("style", _STYLES),
    "pattern": ("pattern name", _PATTERNS),
    "connector": ("style", _CONNECTORS),
    "watts": ("wattage", _WATTS),
}
SIZE_OPTION_KEYS = tuple(k for k, (name, _) in OPTIONS.items() if name == "size")

# ---- attribute sets per category (WebShop mined TF-IDF bigrams per category; these are in that style) -----------
CATEGORY_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "beauty": (
        "cruelty free", "paraben free", "sulfate free", "long lasting", "easy use", "natural ingredients",
        "sensitive skin", "dry skin", "high quality", "travel size", "fragrance free", "dermatologist tested",
    ),
    "grocery": (
        "gluten free", "non gmo", "usda organic", "low sugar", "low sodium", "individually wrapped",
        "keto friendly", "plant based", "high protein", "sugar free", "natural ingredients", "ready eat",
    ),
    "fashion": (
        "machine wash", "long sleeve", "short sleeve", "rubber sole", "slim fit", "classic fit", "button closure",
        "elastic waist", "polyester spandex", "quick drying", "daily wear", "hand wash",
    ),
    "furniture": (
        "easy assembly", "living room", "solid wood", "space saving", "easy clean", "storage space",
        "bedroom furniture", "dining room", "wood finish", "mid century", "heavy duty", "high density",
    ),
    "electronics": (
        "high speed", "easy install", "fast charging", "long lasting", "high definition", "plug play",
        "water resistant", "usb port", "noise cancelling", "wireless charging", "heavy duty", "aluminum alloy",
    ),
}  # fmt: skip
CATEGORY_NAMES = {
    "beauty": "Beauty & Personal Care",
    "grocery": "Grocery & Gourmet Food",
    "fashion": "Clothing, Shoes & Jewelry",
    "furniture": "Home & Kitchen",
    "electronics": "Electronics",
}

BRAND_PARTS = (
    "ar", "bel", "cor", "dan", "el", "fa", "gor", "hal", "is", "jun", "ka", "lum", "mor", "nel", "or", "pra", "qui",
    "ros", "sol", "tam", "ur", "vel", "wyn", "xan", "yor", "zel", "tri", "bo", "lia", "ne",
)  # fmt: skip
MODIFIERS = ("premium", "classic", "ultra", "everyday", "deluxe", "essential", "original", "modern", "pro", "signature")


@dataclass(frozen=True)
class ProductType:
    """One product type: the search query that names it, head nouns, category path, attributes, options, price."""

    query: str
    head: str  # the noun phrase in titles ("hair extension")
    category: str  # top level: beauty, grocery, fashion, furniture, electronics
    path: tuple[str, ...]  # the ` › ` category path below the top level
    attributes: tuple[str, ...]  # type-specific bigrams; products also draw from CATEGORY_ATTRIBUTES
    options: tuple[str, ...]  # option vocabularies (keys of OPTIONS)
    price: tuple[float, float]  # typical low/high in dollars (the lognormal's 2.5% / 97.5% points)


def _parse_types(category: str, table: str) -> tuple[ProductType, ...]:
    """One type per line: `query | head | path | attributes | option keys | low | high` (lists comma-separated)."""
    out = []
    for line in table.strip().splitlines():
        query, head, path, attrs, opts, low, high = (part.strip() for part in line.split("|"))
        out.append(
            ProductType(
                query,
                head or query,
                category,
                tuple(p.strip() for p in path.split("/")),
                tuple(a.strip() for a in attrs.split(",")),
                tuple(o.strip() for o in opts.split(",") if o.strip()),
                (float(low), float(high)),
            )
        )
    return tuple(out)


_BEAUTY = """
shampoo | | Hair Care/Shampoo & Conditioner/Shampoos | tea tree, argan oil, color treated, hair growth, dry hair, damaged hair | scent, volume | 6 | 40
conditioner | | Hair Care/Shampoo & Conditioner/Conditioners | leave in, argan oil, coconut oil, curly hair, frizzy hair, damaged hair | scent, volume | 6 | 38
hair extension | | Hair Care/Hair Extensions, Wigs & Accessories/Extensions | clip in, human hair, synthetic hair, natural looking, heat resistant, straight hair | color, length | 12 | 90
wig | | Hair Care/Hair Extensions, Wigs & Accessories/Wigs | lace front, human hair, natural looking, heat resistant, bob wig, curly hair | color, length | 20 | 160
hair dryer | dryer | Hair Care/Styling Tools & Appliances/Hair Dryers | ionic technology, fast drying, low noise, heat settings, diffuser attachment, travel friendly | color | 18 | 150
face moisturizer | moisturizer | Skin Care/Face/Creams & Moisturizers | hyaluronic acid, fine lines, oil free, non greasy, vitamin c, anti aging | volume, scent | 9 | 70
face serum | serum | Skin Care/Face/Serums | vitamin c, hyaluronic acid, dark spots, fine lines, anti aging, retinol serum | volume | 10 | 60
sunscreen | | Skin Care/Sunscreens & Tanning Products/Sunscreens | spf 50, broad spectrum, water resistant, reef safe, mineral based, oil free | volume, pack | 7 | 35
lipstick | | Makeup/Lips/Lipstick | matte finish, highly pigmented, nourishing formula, vegan formula, creamy texture, long wearing | color, pack | 5 | 35
lip gloss | gloss | Makeup/Lips/Lip Glosses | high shine, non sticky, plumping effect, moisturizing formula, clear gloss, shimmer finish | color, pack | 4 | 25
nail polish | polish | Foot, Hand & Nail Care/Nail Art & Polish/Nail Polish | quick dry, non toxic, chip resistant, high gloss, gel formula, salon quality | color, pack | 4 | 25
eyeshadow palette | palette | Makeup/Eyes/Eyeshadow | highly pigmented, easy blend, shimmer finish, matte shades, neutral shades, long wearing | color | 8 | 55
mascara | | Makeup/Eyes/Mascara | waterproof formula, lengthening volumizing, smudge proof, clump free, sensitive eyes, curling brush | color, pack | 5 | 30
foundation | | Makeup/Face/Foundation | full coverage, oil free, matte finish, natural finish, lightweight formula, buildable coverage | color, volume | 8 | 50
body wash | wash | Personal Care/Bath & Bathing Accessories/Body Washes | gentle cleansing, coconut oil, essential oil, shea butter, moisturizing formula, dry skin | scent, volume | 5 | 30
body lotion | lotion | Skin Care/Body/Lotions | shea butter, non greasy, fast absorbing, dry skin, cocoa butter, daily moisturizer | scent, volume | 5 | 30
toothbrush | | Oral Care/Toothbrushes & Accessories/Manual Toothbrushes | soft bristles, sensitive teeth, bpa free, travel case, deep clean, bamboo handle | color, pack | 3 | 30
electric toothbrush | toothbrush | Oral Care/Toothbrushes & Accessories/Electric Toothbrushes | rechargeable battery, smart timer, brush heads, pressure sensor, whitening mode, travel case | color | 20 | 150
deodorant | | Personal Care/Deodorants & Antiperspirants/Deodorant | aluminum free, baking soda, natural deodorant, long lasting protection, odor protection, clear gel | scent, pack | 4 | 22
perfume | | Fragrance/Women's/Eau de Parfum | floral scent, fresh scent, long lasting fragrance, gift set, travel spray, woody notes | scent, volume | 20 | 150
beard oil | oil | Personal Care/Shaving & Hair Removal/Beard & Mustache Care | beard growth, argan oil, jojoba oil, non greasy, softens beard, natural oils | scent, volume | 8 | 35
makeup brush | brush | Tools & Accessories/Makeup Brushes & Tools/Brush Sets | synthetic bristles, cruelty free, soft bristles, travel case, blending brush, vegan brushes | color, pack | 6 | 40
"""

_GROCERY = """
coffee beans | coffee | Beverages/Coffee, Tea & Cocoa/Coffee/Whole Coffee Beans | dark roast, fair trade, single origin, medium roast, low acid, whole bean | weight, flavor | 8 | 45
ground coffee | coffee | Beverages/Coffee, Tea & Cocoa/Coffee/Ground Coffee | dark roast, medium roast, fair trade, french roast, low acid, decaf coffee | weight, flavor | 7 | 35
green tea | tea | Beverages/Coffee, Tea & Cocoa/Tea/Green Tea | caffeine free, loose leaf, tea bags, antioxidant rich, matcha powder, herbal blend | pack, flavor | 4 | 30
protein bar | bar | Snack Foods/Bars/Protein Bars | low carb, whey protein, soft baked, grain free, dairy free, meal replacement | flavor, pack | 10 | 50
protein powder | powder | Sports Nutrition/Protein/Whey Protein | whey protein, grass fed, low carb, muscle recovery, easy mix, dairy free | flavor, weight | 20 | 80
olive oil | oil | Pantry Staples/Cooking Oils/Olive Oils | extra virgin, cold pressed, glass bottle, first harvest, single origin, rich flavor | volume, pack | 8 | 60
dark chocolate | chocolate | Snack Foods/Candy & Chocolate/Chocolate Bars | fair trade, dairy free, high cocoa, rich flavor, gift box, bite size | flavor, pack | 4 | 40
trail mix | mix | Snack Foods/Nuts & Seeds/Trail Mix | resealable bag, roasted nuts, dried fruit, lightly salted, snack packs, healthy snack | weight, pack | 5 | 35
pasta sauce | sauce | Pantry Staples/Sauces, Gravies & Marinades/Pasta Sauces | no sugar added, slow cooked, italian style, tomato basil, glass jar, family size | flavor, pack | 4 | 30
dog treats | treats | Pet Supplies/Dogs/Treats | grain free, made usa, small breeds, soft chewy, real meat, dental health | flavor, weight | 6 | 40
cat food | food | Pet Supplies/Cats/Food/Dry | grain free, real chicken, indoor cats, hairball control, high protein, kitten formula | flavor, weight | 8 | 60
beef jerky | jerky | Snack Foods/Jerky & Dried Meats/Beef Jerky | grass fed, high protein, low fat, zero sugar, original recipe, snack packs | flavor, pack | 6 | 45
potato chips | chips | Snack Foods/Chips & Crisps/Potato Chips | kettle cooked, gluten free, sea salt, snack size, thick cut, family size | flavor, pack | 3 | 30
granola | | Breakfast Foods/Cereals/Granola | whole grain, honey almond, high fiber, clusters granola, no artificial, breakfast cereal | flavor, weight | 4 | 25
honey | | Pantry Staples/Jams, Jellies & Sweet Spreads/Honey | raw honey, pure honey, unfiltered honey, squeeze bottle, local honey, manuka honey | weight, pack | 6 | 45
peanut butter | butter | Pantry Staples/Jams, Jellies & Sweet Spreads/Peanut Butter | creamy peanut, crunchy peanut, no stir, natural peanut, palm oil free, salt free | weight, pack | 4 | 25
sparkling water | water | Beverages/Bottled Beverages, Water & Drink Mixes/Sparkling Water | zero calories, natural flavors, sodium free, no sweeteners, bpa free cans, caffeine free | flavor, count | 6 | 35
energy drink | drink | Beverages/Sports & Energy Drinks/Energy Drinks | zero sugar, natural caffeine, b vitamins, pre workout, low calorie, electrolyte mix | flavor, count | 15 | 50
baby formula | formula | Baby Foods/Formula/Powder | easy digest, dha support, non gmo formula, sensitive tummies, infant formula, milk based | weight, pack | 20 | 60
spice set | spices | Pantry Staples/Herbs, Spices & Seasonings/Mixed Spices & Seasonings | salt free, gift set, glass jars, all purpose, organic spices, variety pack | pack | 10 | 60
instant noodles | noodles | Pantry Staples/Dried Beans, Grains & Rice/Noodles | ramen noodles, spicy flavor, quick meal, cup noodles, vegetarian broth, bulk pack | flavor, count | 8 | 35
maple syrup | syrup | Pantry Staples/Jams, Jellies & Sweet Spreads/Syrups | pure maple, grade a, dark robust, amber rich, glass bottle, pancake syrup | volume, pack | 8 | 45
"""

_FASHION = """
running shoes | shoes | Men/Shoes/Athletic/Running | lace up, breathable mesh, arch support, lightweight design, memory foam, cushioned sole | color, shoe | 30 | 160
sneakers | sneakers | Women/Shoes/Fashion Sneakers | slip on, memory foam, canvas upper, non slip, everyday wear, platform sole | color, shoe | 25 | 120
sandals | | Women/Shoes/Sandals/Flat Sandals | open toe, ankle strap, arch support, faux leather, beach sandals, cushioned footbed | color, shoe | 15 | 80
boots | | Women/Shoes/Boots/Ankle & Bootie | side zipper, faux fur, block heel, water resistant, lug sole, pointed toe | color, shoe | 35 | 180
slippers | | Men/Shoes/Slippers | memory foam, faux fur, non slip, house slippers, indoor outdoor, warm lining | color, shoe | 12 | 50
hoodie | | Men/Clothing/Fashion Hoodies & Sweatshirts | cotton blend, relaxed fit, front pocket, fleece lined, drawstring hood, pullover hoodie | color, size | 18 | 70
t-shirt | shirt | Men/Clothing/Shirts/T-Shirts | crew neck, soft cotton, tagless design, moisture wicking, graphic tee, v neck | color, size | 8 | 35
dress shirt | shirt | Men/Clothing/Shirts/Dress Shirts | wrinkle free, button down, regular fit, non iron, spread collar, stretch fabric | color, size | 20 | 70
polo shirt | shirt | Men/Clothing/Shirts/Polos | pique cotton, moisture wicking, golf shirt, three button, ribbed collar, regular fit | color, size | 15 | 60
jeans | | Women/Clothing/Jeans | high waist, stretch denim, skinny fit, straight leg, distressed jeans, five pocket | color, size | 25 | 90
yoga pants | pants | Women/Clothing/Active/Leggings | high waist, tummy control, four way stretch, squat proof, side pockets, yoga leggings | color, size | 15 | 60
shorts | | Men/Clothing/Shorts/Athletic | drawstring closure, zipper pockets, quick dry, athletic shorts, cargo shorts, inch inseam | color, size | 12 | 45
dress | | Women/Clothing/Dresses/Casual | summer casual, v neck, midi length, loose fit, floral print, maxi dress | color, size | 20 | 90
skirt | | Women/Clothing/Skirts | a line, pleated skirt, midi skirt, high waisted, mini skirt, flowy skirt | color, size | 15 | 60
sweater | | Women/Clothing/Sweaters/Pullovers | crew neck, cable knit, oversized fit, soft knit, turtleneck sweater, cardigan sweater | color, size | 20 | 80
rain jacket | jacket | Women/Clothing/Coats, Jackets & Vests/Rain Jackets | zip closure, packable hood, windproof shell, adjustable cuffs, waterproof jacket, breathable fabric | color, size | 35 | 150
winter coat | coat | Men/Clothing/Jackets & Coats/Down Jackets & Parkas | faux fur, detachable hood, down alternative, windproof shell, warm winter, zipper pockets | color, size | 50 | 220
pajama set | pajamas | Women/Clothing/Lingerie, Sleep & Lounge/Sleep & Lounge/Sets | soft pajama, button down, elastic waistband, sleepwear set, loungewear set, two piece | color, size | 18 | 60
swimsuit | | Women/Clothing/Swimsuits & Cover Ups/One-Pieces | tummy control, one piece, padded bra, adjustable straps, quick drying, bathing suit | color, size | 18 | 70
socks | | Men/Clothing/Socks/Athletic Socks | moisture wicking, cushioned sole, arch support, breathable knit, odor control, ankle length | color, pack | 8 | 30
baseball cap | cap | Men/Accessories/Hats & Caps/Baseball Caps | adjustable strap, cotton twill, sun protection, unisex cap, embroidered logo, curved brim | color | 10 | 35
backpack | | Luggage & Travel Gear/Backpacks/Casual Daypacks | laptop compartment, water resistant, usb charging, large capacity, padded straps, anti theft | color | 20 | 90
wallet | | Men/Accessories/Wallets, Card Cases & Money Organizers/Wallets | rfid blocking, genuine leather, card holder, slim wallet, bifold wallet, coin pocket | color | 12 | 60
sunglasses | | Men/Accessories/Sunglasses & Eyewear Accessories/Sunglasses | polarized lenses, uv protection, metal frame, lightweight frame, aviator style, driving sunglasses | color | 12 | 90
"""

_FURNITURE = """
bookshelf | | Furniture/Home Office Furniture/Bookcases | 5 tier, industrial style, open shelves, wall mounted, ladder shelf, corner bookcase | color, material | 40 | 250
office chair | chair | Furniture/Home Office Furniture/Desk Chairs | lumbar support, height adjustable, ergonomic design, mesh back, swivel base, padded armrests | color | 60 | 350
coffee table | table | Furniture/Living Room Furniture/Tables | storage shelf, lift top, round coffee, glass top, farmhouse style, wood frame | color, material | 50 | 300
bed frame | frame | Furniture/Bedroom Furniture/Beds & Frames | metal platform, under bed, box spring, noise free, upholstered headboard, wood slats | bed, color | 90 | 500
mattress | | Furniture/Bedroom Furniture/Mattresses | memory foam, medium firm, cooling gel, pressure relief, hybrid mattress, motion isolation | bed | 150 | 900
throw pillow | pillow | Bedding/Decorative Pillows | hidden zipper, soft velvet, square shape, farmhouse style, pillow covers, decorative pillows | color, pack | 10 | 45
area rug | rug | Home Décor/Area Rugs | non slip, stain resistant, low pile, machine washable, shag rug, boho rug | color, rug | 30 | 260
nightstand | | Furniture/Bedroom Furniture/Nightstands | storage drawer, charging station, small spaces, open shelf, bedside table, end table | color, material | 35 | 180
floor lamp | lamp | Lighting/Floor Lamps | dimmable light, energy efficient, foot switch, reading light, linen shade, led bulb | color | 30 | 160
table lamp | lamp | Lighting/Table Lamps | usb ports, touch control, bedside lamp, fabric shade, ceramic base, set 2 | color, pack | 20 | 90
dining chair | chair | Furniture/Kitchen & Dining Room Furniture/Chairs | upholstered seat, set 4, metal legs, faux leather, high back, armless chair | color, pack | 60 | 300
bar stool | stool | Furniture/Kitchen & Dining Room Furniture/Barstools | counter height, swivel seat, back rest, set 2, footrest, adjustable height | color, pack | 50 | 250
sofa | | Furniture/Living Room Furniture/Sofas & Couches | sectional sofa, loveseat sofa, sleeper sofa, removable cushions, tufted back, modern sofa | color, material | 200 | 900
tv stand | stand | Furniture/Living Room Furniture/TV Stands & Entertainment Centers | entertainment center, storage cabinet, cable management, open shelves, media console, led lights | color, material | 60 | 300
shoe rack | rack | Storage & Organization/Clothing & Closet Storage/Shoe Organizers | 4 tier, entryway bench, stackable shoe, metal frame, non woven, free standing | color | 15 | 80
curtains | curtain | Home Décor/Window Treatments/Curtains & Drapes | blackout curtains, thermal insulated, grommet top, room darkening, rod pocket, sheer curtains | color, panel | 15 | 70
bedding set | comforter | Bedding/Comforters & Sets | comforter set, down alternative, all season, soft microfiber, duvet cover, pillow shams | color, bed | 30 | 150
bath towel | towel | Bath/Towels/Bath Towels | quick dry, highly absorbent, soft cotton, hotel quality, bath sheets, towel set | color, pack | 15 | 70
wall mirror | mirror | Home Décor/Mirrors/Wall-Mounted Mirrors | full length, round mirror, metal frame, wall mounted, bathroom vanity, decorative mirror | color, style | 30 | 200
storage cabinet | cabinet | Furniture/Entryway Furniture/Storage Cabinets | adjustable shelves, two doors, kitchen pantry, wood cabinet, bathroom storage, tall cabinet | color, style | 60 | 280
"""

_ELECTRONICS = """
wireless earbuds | earbuds | Headphones/Earbud Headphones | charging case, long battery, touch control, bluetooth 5, true wireless, sports earbuds | color | 20 | 200
headphones | | Headphones/Over-Ear Headphones | over ear, foldable design, built microphone, hi fi, memory foam, wired headphones | color | 25 | 300
usb cable | cable | Computers/Cables/USB Cables | braided nylon, data sync, usb c, durable connector, charging cable, tangle free | color, length | 6 | 30
phone case | case | Cell Phones & Accessories/Cases/Basic Cases | shock absorbing, slim fit, raised edges, clear back, drop protection, kickstand case | color | 7 | 40
screen protector | protector | Cell Phones & Accessories/Screen Protectors | tempered glass, bubble free, case friendly, anti scratch, easy installation, 9h hardness | pack | 5 | 20
memory card | card | Computers/Memory Cards/Micro SD Cards | 4k video, sd adapter, full hd, class 10, read speed, action camera | capacity, pack | 8 | 120
usb flash drive | drive | Computers/Data Storage/USB Flash Drives | usb 3, metal casing, key chain, thumb drive, data storage, read speed | capacity, pack | 6 | 60
external hard drive | drive | Computers/Data Storage/External Hard Drives | portable hard, usb 3, backup software, slim design, solid state, shock resistant | capacity, color | 50 | 250
bluetooth speaker | speaker | Portable Audio/Bluetooth Speakers | deep bass, built microphone, stereo sound, outdoor use, portable speaker, ipx7 waterproof | color | 20 | 180
smart watch | watch | Wearable Technology/Smartwatches | heart rate, sleep tracking, gps tracking, touch screen, fitness tracker, blood oxygen | color | 40 | 300
hdmi cable | cable | Television & Video/Accessories/HDMI Cables | 4k video, gold plated, braided nylon, ethernet support, durable connector, 8k hdmi | length, pack | 6 | 40
laptop stand | stand | Computers/Accessories/Laptop Stands | height adjustable, heat dissipation, non slip, foldable design, ergonomic design, portable stand | color | 15 | 70
phone charger | charger | Cell Phones & Accessories/Chargers & Power Adapters/Wall Chargers | fast charger, wall charger, dual port, foldable plug, gan charger, power delivery | connector, watts | 10 | 50
power bank | bank | Cell Phones & Accessories/Chargers & Power Adapters/Portable Power Banks | high capacity, led display, dual usb, portable charger, slim design, fast charge | color, capacity | 15 | 80
computer monitor | monitor | Computers/Monitors | full hd, ips panel, eye care, refresh rate, frameless design, vesa mount | screen | 90 | 450
keyboard | | Computers/Accessories/Keyboards | mechanical keyboard, rgb backlit, quiet typing, ergonomic keyboard, compact layout, wireless keyboard | color | 20 | 150
computer mouse | mouse | Computers/Accessories/Mice | wireless mouse, ergonomic design, silent click, adjustable dpi, rechargeable battery, gaming mouse | color | 10 | 80
security camera | camera | Camera & Photo/Video Surveillance/Surveillance Cameras | night vision, motion detection, two way, 1080p hd, outdoor camera, cloud storage | color, pack | 25 | 200
tablet case | case | Computers/Tablet Accessories/Cases & Sleeves | pencil holder, auto sleep, trifold stand, shockproof case, slim case, soft tpu | color, screen | 10 | 45
led strip lights | lights | Lighting/LED Strip Lights | color changing, remote control, music sync, app control, bedroom lights, 16 million | length | 10 | 60
"""

TYPES: tuple[ProductType, ...] = (
    _parse_types("beauty", _BEAUTY)
    + _parse_types("grocery", _GROCERY)
    + _parse_types("fashion", _FASHION)
    + _parse_types("furniture", _FURNITURE)
    + _parse_types("electronics", _ELECTRONICS)
)

# Nouns for the lexicon title scorer: head-noun words of every type plus the generic nouns titles may carry.
TITLE_NOUNS = frozenset(
    {w for t in TYPES for w in t.head.replace("-", " ").split()} | {"pack", "set", "oz", "ounce", "pound", "inch"}
)
