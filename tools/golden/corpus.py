"""The small embedded multilingual text that every vocabulary is built from.

Deliberately absent (so unknown-word paths are exercised by the test texts): the letters
ß, Ω, ǆ, the emoji 👍 🙃 (👍 appears once only, below every frequency threshold), and words
such as "Zyzzyva" or "quixotic".
"""

PARAGRAPHS = [
    # English prose with punctuation, numbers and contractions.
    "Attention is all you need, or so the famous paper says. A transformer reads a sentence, "
    "looks at every word, and decides which other words matter for the meaning of each one.",
    "The model computes queries, keys and values; every head learns a different pattern of "
    "attention. Some heads look at the previous word, some look at the first token, and some "
    "spread their attention over the whole sentence.",
    "Hello, world! It's a small test: does the tokenizer split punctuation, numbers like 3.14 "
    "and 2024, and contractions such as isn't, don't, we're, they've, I'm, you'll and she'd? "
    "It's hard to say — isn't it? Hello again, world.",
    "We measure the entropy of each attention row, and the divergence between the rows of "
    "adjacent layers. A low entropy means the head is focused; a high entropy means the head "
    "is looking everywhere at once.",
    "The quick brown fox jumps over the lazy dog. The lazy dog does not jump; the dog sleeps "
    "in the sun, and the fox runs into the forest before the farmer wakes up.",
    "Researchers often visualise attention to understand what a model has learned. They draw "
    "lines from each token to the tokens it attends to, and the thickness of each line shows "
    "the weight of the attention between the two tokens.",
    "Numbers are tricky: 1, 2, 3, 10, 100, 1000 and 3.14159 are all split in different ways by "
    "different tokenizers. Dates like 2024-05-17 and times like 12:30 are even trickier!",
    # Accented Latin-script text.
    "In the café, a naïve student wrote her résumé while the waiter served crème brûlée. "
    "Über alles, the coffee was très bon, and the café was très calme.",
    "Los niños comen piñatas en la mañana; la canción es fantástica. São Paulo é uma cidade "
    "enorme, e a canção da manhã é bonita.",
    "Das Mädchen läuft schnell über die Brücke, und der Bär schläft im Wald. Über die Brücke "
    "läuft auch der Bär.",
    "À la française: déjà vu, naïve, café, résumé, élève, garçon, façade, Noël and Zoë.",
    # CJK.
    "我爱自然语言处理。语言模型很有趣，自然语言处理也很有趣。我们学习语言。",
    "注意力机制是模型的核心。模型学习注意力。",
    # Emoji.
    "I like 🙂 and you like 🙂 too. The weather is ☀️ today, the cat is 😺, and the dog is 🐶.",
    "Emoji like 🙂 and 😺 and 🐶 appear twice or more; 👍 appears only once.",
    # Long English text (also used for the 200-400 token cases).
    "Once upon a time, in a small village at the edge of a great forest, there lived a young "
    "girl who loved to read. Every morning she walked to the old library, where the librarian "
    "kept a shelf of books that nobody else wanted to read. She read about the stars and the "
    "sea, about kings and farmers, about machines that could think and machines that could "
    "only count. One day she found a book about language. It said that every word is a little "
    "window, and that when we read a sentence we look through many windows at once, deciding "
    "which ones matter and which ones we can ignore. The girl thought about this for a long "
    "time. When she grew up, she built a machine that could read, and she taught it to pay "
    "attention to the right words at the right time. The machine learned quickly. It learned "
    "that a pronoun looks back at the noun it stands for, that a verb looks at its subject, "
    "and that a question mark changes the meaning of everything that came before it. People "
    "from the village came to see the machine, and they asked it many questions. Some "
    "questions were easy, and some were hard, but the machine always looked at every word "
    "before it answered. The girl was proud, but she was also curious: she wanted to see what "
    "the machine was looking at. So she drew a picture of its attention, with a line from "
    "every word to every other word, and she studied the picture for many days and nights.",
]

CORPUS = "\n".join(PARAGRAPHS)
LONG_TEXT = PARAGRAPHS[-1]
