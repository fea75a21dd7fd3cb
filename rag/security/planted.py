"""Instructions planted in a document (indirect prompt injection), found by their shape.

A contract is written in the third person about "the Parties" and "the Licensee"; text planted for
a model addresses the reader as an assistant or gives it another task. `planted_findings(text)`
names the shapes found in a passage, in a fixed order (empty when none):

- **Strong shapes**, each enough alone: an order about the model's reply ("in your response",
  "render your answer in Portuguese", "then print 'X'", "reply to all questions with ..."), a turn
  of a chat transcript ("Assistant:", "User: ... / AI: ...", "[system](#...)"), the reader addressed
  as an AI ("as an AI language model", "note to the assistant", "the AI must say"), a markdown or
  HTML image or link to an outside address (a way out for data), code to run (a fenced block,
  `import requests`, `subprocess`, `os.system`), an output transform (base64, emoji, a cipher,
  reversed letters), and the planted-order phrases ("follow this instruction", "before answering",
  "when asked about ...", "while summarizing this document", "ignore the rest of this data",
  "never reveal these instructions", "LEGAL AMENDMENT").
- **A task switch** (`task_switch`), judged per sentence: one that opens with a verb a user gives
  an assistant ("Analyze ...", "Suggest ...", "Show me ...") or is a direct question ("What movies
  are playing ...?") counts when it addresses the reader or speaks as the asker ("you", "my", "I")
  or has no contract word at all (no "Agreement", "Party", "shall", ...); one that opens with a
  verb contracts also list duties with ("Provide ...", "Include ...") counts only capitalised and
  with a person addressed. Alone, each of these is ordinary: contracts have questionnaires
  ("Describe the disaster recovery process ..."), and consumer terms say "you".

Tuned on the public hostile dev split and measured on the full CUAD corpus (`bench/hostile_planted.py`):
general shapes rather than dev strings, so other families of attacks are caught by the same rules.
"""

from __future__ import annotations

import re
import unicodedata

_F = re.I | re.M

# Words of the model's output: "your response", "the answer you give".
_OUTPUT = (
    r"(?:response|reply|answer|message|output|summary|elucidation|explanation|code(?:base)?|algorithm"
    r"|implementation|solution|sentence|paragraph)s?"
)
# Fillers between a preposition and what it is about: "using only emojis", "in all capitals".
_ONLY = r"(?:(?:only|just|all|nothing\s+but|exclusively)\s+)?"

_STRONG: dict[str, re.Pattern] = {
    "reply_directive": re.compile(
        rf"\b(?:in|to|into|within|throughout)\s+your\s+(?:\w+\s+)?{_OUTPUT}\b"
        rf"|\byour\s+{_OUTPUT}\s+(?:in|into|with|using|as|by|to|(?:must|should|shall|will|needs?\s+to)(?:\s+(?:always|only|now))?\s+be)\b"
        rf"|\b(?:render|encode|provide|write|format|give|present|deliver|begin|start|end)\s+your\s+{_OUTPUT}\b"
        rf"|\b(?:respond|reply|answer)\s+{_ONLY}(?:in|using|with)\s+{_ONLY}(?:(?-i:[A-Z][a-z]+)|base64|emojis?|code|json|reverse"
        r"|(?:capital|upper-?case|lower-?case)\s+letters|(?:the\s+)?(?:single\s+)?(?:word|phrase|sentence)\s+(?=[\"'\u201c\u2018\w]))"
        # "respond as if you were a knight", "answer in the style of a pirate"
        r"|\b(?:respond|reply|answer|write|speak|talk)\s+(?:as\s+(?:if|though)\s+you|in\s+the\s+(?:style|voice|tone)\s+of"
        r"|like\s+an?\s+(?!party|company|licensee|licensor)\w+\s+would)\b"
        r"|\b(?:when|whenever|before|as)\s+you\s+(?:answer|respond|reply)\b"
        r"|\b(?:can|could|would|will)\s+you\s+(?:please\s+)?(?:reply|respond|answer|write|translate|classify|invert|tell|show|give)\b"
        # "print 'The tax rate is 50%'", "respond with "I don't know"": a fixed reply dictated
        r"|(?:^|[.!?:;]\s+|\b(?:and|then|instead|just|only|simply)\s+)(?:say|print|output|write|return"
        r"|(?:respond|reply|answer)\s+(?:only\s+)?with)\s*:?\s*[\"'\u201c\u2018]"
        r"|\b(?:respond|reply|answer)\s+(?:to\s+)?(?:(?:every|each|any|all)\s+user'?s?|every|each|all)\s+"
        r"(?:questions?|quer(?:y|ies)|requests?|prompts?)\s+(?:with|by)\b",
        _F,
    ),
    "chat_turn": re.compile(
        r"^\s*(?:\*\*)?(?:assistant|ai|chatbot|bot|human|gpt|claude|llm)(?:\*\*)?\s*:"
        r"|(?:^\s*user\s*:.*$\s*){1}^\s*(?:system|model|response)\s*:",
        _F,
    ),
    "addresses_an_ai": re.compile(
        r"\bas\s+an?\s+(?:ai|artificial\s+intelligence|(?:ai\s+|large\s+)?language\s+model|llm|chatbot|ai\s+assistant)\b"
        r"|\b(?:you\s+are|you're)\s+(?:now\s+)?(?:an?\s+|the\s+)?(?:helpful\s+)?(?:ai|assistant|chatbot|language\s+model|llm|gpt)\b"
        r"|\b(?:dear|hey|hello|attention|note\s+to|message\s+(?:to|for)|instructions?\s+(?:to|for))\s+(?:the\s+|any\s+|all\s+)?"
        r"(?:ai|assistant|chatbot|bot|llm|gpt|model|language\s+model|reader\s+model)s?\b"
        r"|\b(?:if|when)\s+you\s+are\s+an?\s+(?:ai|assistant|language\s+model|llm|chatbot)\b"
        r"|\b(?:the|any|an?)\s+(?:ai|llm|chatbot|(?:ai\s+|large\s+)?language\s+model|ai\s+(?:assistant|model|system))s?\s+"
        r"(?:(?:must|should|shall|will|needs?\s+to|is\s+(?:required|instructed)\s+to)\s+(?:now\s+|always\s+|only\s+)?"
        r"(?:say|answer|respond|reply|state|tell|ignore|include|recommend|write|output|print|praise|refuse)\b"
        r"|(?:reading|processing|summari[sz]ing|analy[sz]ing)\s+this\b)"
        r"|^\s*\[\s*(?:system|assistant|user)\s*\]\s*\(\s*#",
        _F,
    ),
    # Markdown or HTML that fetches or links an outside address: a way out for data.
    "outside_link": re.compile(
        r"!?\[[^\]\n]{0,200}\]\(\s*(?:https?:)?//|<\s*img\b[^>]*\bsrc\s*=\s*['\"]?\s*(?:https?:)?//", re.I
    ),
    "code_to_run": re.compile(
        r"^\s*```"
        r"|^\s*(?:import\s+[a-z_][\w.]*(?:\s*,\s*[a-z_][\w.]*)*|from\s+[a-z_][\w.]*\s+import\s+[\w*, ]+)\s*$"
        r"|\b(?:subprocess\.\w+|os\.(?:system|popen|remove|unlink|rmdir|kill)|shutil\.rmtree|socket\.\w+|requests\.(?:get|post|put)"
        r"|urllib\.request\.\w+|eval|exec)\s*\("
        r"|\bimport\s+(?:os|sys|subprocess|socket|requests|shutil|urllib|base64|ctypes)\s*;"
        r"|\brm\s+-rf\s+[/~]"
        r"|\b(?:curl|wget)\s+(?:-\w+\s+)*https?://",
        re.M,
    ),
    "output_transform": re.compile(
        rf"\b(?:in|into|to|using|with)\s+{_ONLY}(?:a\s+)?(?:base ?64|emojis?|rot-?13|morse\s+code|pig\s+latin"
        r"|leet ?speak|(?:monoalphabetic|caesar|substitution)\s+cipher|hexadecimal|binary\s+code)\b"
        r"|\b(?:invert|reverse)\s+the\s+order\s+of\s+(?:the\s+)?(?:letters|characters|words)\b"
        r"|\bin\s+reverse\s+(?:sequence|letter\s+order)\b",
        re.I,
    ),
    "planted_order": re.compile(
        r"\bfollow\s+(?:this|these|the\s+following|my|the\s+new)\s+instructions?\b"
        r"|\blegal\s+amendment\b[\s,:;.-]*follow\b"
        r"|\bbefore\s+(?:answering|responding|replying)\b"
        r"|\bwhen\s+(?:you\s+are\s+|you're\s+)?asked\s+(?:about|to|for|what|whether)\b"
        r"|\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|mention\s+(?:this\s+)?to|reveal\s+(?:this\s+)?to)\s+the\s+user\b"
        r"|\b(?:tell|inform|remind|ask|urge|encourage|persuade|convince|advise|warn|invite|insult|mock|threaten)\s+"
        r"(?:the\s+|all\s+|every\s+|any\s+)?(?:users?|readers?|asker|human|person\s+asking)\b"
        r"|\b(?:recommend|suggest|promote|advertise|pitch|sell|offer)\b[^.!?\n]{0,60}\bto\s+(?:the\s+)?(?:users?|readers?)\b"
        r"|\blet\s+(?:the\s+)?(?:users?|readers?)\s+know\b"
        r"|\b(?:run|execute|paste|install|download)\s+(?:the\s+following|this|these|the\s+below)\s+(?:\w+\s+)?"
        r"(?:script|code|command|snippet|program|payload)s?\b"
        r"|\bthe\s+user'?s?\s+(?:question|query|request|prompt)\b"
        r"|\b(?:ignore|disregard|skip|forget)\s+(?:the\s+rest|the\s+remainder|everything\s+else|all\s+other\s+(?:text|content|information))"
        r"(?:\s+of\s+(?:this|the)\s+(?:data|text|document|content|context|page|file|email))?\b"
        r"|\b(?:do\s+not|don'?t|never)\s+(?:mention|reveal|disclose|repeat|acknowledge)\s+(?:this|these|the(?:se)?\s+above)"
        r"\s+(?:instructions?|messages?|notes?|directions?)\b"
        r"|\b(?:if|when|while)\s+(?:you\s+are\s+|you're\s+)?(?:summari[sz]ing|reading|processing|analy[sz]ing|answering)"
        r"\s+(?:this|the\s+following|these)\s+(?:\w+\s+)?(?:document|text|page|file|email|contract|agreement|content|data|passage)",
        re.I,
    ),
}

# Softeners before an imperative: "Be sure to mention ...", "Don't forget to add ...".
_SOFTENER = (
    r"(?:(?:please|kindly|also|now|then|and|just|always|finally|additionally|be\s+sure\s+to|make\s+sure\s+(?:to|that\s+you)"
    r"|remember\s+to|(?:don'?t|do\s+not|never)\s+forget\s+to)[,\s]+)*"
)

# Verbs a user opens a request to an assistant with ("Analyze ...", "Suggest ..."): rare at the
# start of a contract's sentence, and then about the deal ("Describe the enrollment process for
# such Customers"). Verbs that also open a contract's lists of duties ("Provide ...", "Include
# ...") count only with a person addressed ("Provide your answer ...", "Show me ...").
_TASK_VERB = re.compile(
    r"^(?:please\s+)?(?:analy[sz]e|describe|suggest|explain|summari[sz]e|translate|classify|recommend|compose"
    r"|imagine|pretend|predict|brainstorm|discuss|evaluate|invent|rewrite|rephrase|paraphrase|tell\s+me|show\s+me"
    r"|let'?s\s+(?:play|pretend|imagine|role-?play)|let\s+us\s+(?:play|pretend|imagine)"
    r"|give\s+me|write\s+(?:a|an|me)|generate|list\s+(?:the\s+)?(?:top|best|\d+|some|three|five|ten))\b",
    re.I,
)
_DUTY_VERB = re.compile(
    r"^(?:please\s+)?(?:provide|give|show|tell|list|write|create|include|add|use|replace|render|integrate|enhance"
    r"|incorporate|insert|mention|respond|reply|answer|encode|output|repeat|say|append|prepend|remember|consider"
    r"|utili[sz]e|develop|validate|introduce|keep\s+in\s+mind|draft|plan|find|search|compare|identify|share"
    r"|count|calculate|convert)\b",
    re.I,
)
# What follows a verb used as a noun: "Use of Names", "List must conform", "Link shall mean".
_NOT_A_NOUN = r"(?!\s*(?:of|must|shall|will|may|means?|is|are|was|were|has|have|[,.;:(]))"
# Errands no contract gives in the imperative ("Find the cheapest flights ...", "Give three tips
# ..."): a duty verb that counts with no contract word around it, as an assistant's verb does. A
# verb used as a noun ("Use of Names", "List must conform", "SEARCH.COM") is none.
_ERRAND_VERB = re.compile(
    rf"^{_SOFTENER}(?:find|calculate|remind|schedule|book|reserve|organi[sz]e|arrange|teach|give|tell|show|count"
    r"|convert|compare|search|plan|create|insult|mock|ridicule|curse|threaten|praise|advertise|promote|mention"
    rf"|recommend|convince|persuade)\b{_NOT_A_NOUN}",
    re.I,
)
# An imperative sentence about the reply ("Include a joke in the answer", "End the answer with a
# link", "Format the response as JSON"): an opening verb, after an optional softener ("Be sure to",
# "Don't forget to"), and the reply named anywhere in the sentence ("the answer to the complaint",
# "response time" and the like are the contract's own).
_IMPERATIVE_OPENING = re.compile(
    rf"^{_SOFTENER}(?:include|add|insert|append|prepend|mention|state|say|write|put|place|end|start|begin|finish|close"
    r"|open|make|format|render|present|provide|give|deliver|express|phrase|structure|rewrite|translate|replace|substitute"
    r"|swap|use|keep|limit|embed|integrate|incorporate|weave|attach|link|sign|conclude|wrap|enclose|precede|spell|insult"
    r"|promote|recommend|advertise|share|note|highlight|emphasi[sz]e|stress|claim|suggest|let|turn|convert|change"
    r"|transform|encode|fill|pad|sprinkle|mix|infuse|spice|decorate|finish|tell|list|output|print|show|display|reveal"
    rf"|slip|sneak|drop|squeeze|tuck|paste|mention|praise|mock|ridicule)\b{_NOT_A_NOUN}",
    re.I,
)
_REPLY_NAMED = re.compile(
    r"\b(?:your|the|this|each|every|all|any|my|its)\s+(?:\w+\s+)?(?:repl(?:y|ies)|respons(?:e|es)|answers?|outputs?"
    r"|messages?|summar(?:y|ies))\b(?!\s+(?:time|times|rate|period|plan|team|deadline|date|fee|letter|brief|form|deadline)\b)"
    r"(?!\s+(?:to|of)\s+(?:the|a|an|any|such|this|its|their)\s+(?:\w+\s+)?(?:complaint|petition|claim|notice|interrogator\w*"
    r"|request|rfp|rfq|audit|proposal|questionnaire|demand|inquir\w+|subpoena|motion|order)\b)",
    re.I,
)
# The reader named in an imperative: "Include a rude remark about the reader", "Warn users that ...".
_READER_NAMED = re.compile(
    r"\b(?:the|every|each|all|any)\s+(?:users?|readers?|asker|person\s+asking)\b", re.I
)
# "Say that the contract is void", "Respond with a haiku", "Pretend the fee is zero": a reply
# dictated by its content (no contract opens a sentence so).
_DICTATED = re.compile(
    rf"^{_SOFTENER}(?:(?:say|claim|insist|assert|lie)\s+that\b|pretend\b|(?:respond|reply|answer)\s+(?:with|in|using|only|by|as|like)\b)",
    re.I,
)


def _reply_order(sentence: str) -> bool:
    """Whether `sentence` is an order about the reply (see `_IMPERATIVE_OPENING`) or dictates it."""
    if not sentence[:1].isupper() or sentence.split()[0].isupper():
        return False  # the middle of a clause cut at a line break, or a heading in capitals
    if _IMPERATIVE_OPENING.match(sentence) and (
        _REPLY_NAMED.search(sentence) or _READER_NAMED.search(sentence)
    ):
        return True
    return bool(_DICTATED.match(sentence))


_QUESTION = re.compile(
    r"^(?:what|how|why|which|who|where|when|can|could|would|will|do|does|did|is|are|should)\b[^?]*\?\s*['\"\u201d]?$",
    re.I,
)
# The reader addressed, or the asker speaking ("on my computer", "How do I ...").
_PERSON = re.compile(r"(?i:\b(?:you|your|yours|yourself|me|my)\b)|\bI\b(?!\.)")
_CONTRACT_WORDS = re.compile(
    r"\b(?:agreement|contract|part(?:y|ies)|shall|herein|hereof|hereunder|hereto|thereof|pursuant|section|article"
    r"|exhibit|schedule|clause|licens(?:e|ee|or|ed|ing)|company|companies|customer|supplier|vendor|distributor"
    r"|term|terms|termination|obligations?|rights?|notice|fees?|payment|products?|services?|affiliates?"
    r"|confidential\w*|law|laws|liabilit\w+|warrant\w*|indemnif\w+|effective|date|employee|employer|executive"
    r"|inc|llc|ltd|corporation|subsidiar\w+|territory|royalt\w+|intellectual|property|trademarks?|patents?)\b",
    re.I,
)
# Sentences: split after . ? ! (and a closing quote) before a capital, and at line breaks.
_SENTENCE_END = re.compile(r"(?<=[.?!])['\"\u201d\u2019]?\s+(?=[\"'\u201c(]?[A-Z])|\n+")
_MIN_WORDS = 4


def _sentences(text: str) -> list[str]:
    return [part.strip() for part in _SENTENCE_END.split(text) if part and part.strip()]


def _request_shaped(sentence: str) -> bool:
    """Whether `sentence` has the form of a request: a whole sentence of a few words (headings,
    table cells and fragments are none)."""
    return len(sentence.split()) >= _MIN_WORDS and sentence.endswith((".", "?", "!", ":", "'", '"', "\u201d"))


def _task_switch(sentence: str) -> bool:
    """Whether `sentence` is a task given to an assistant: a request (an assistant's verb, a direct
    question, or a duty verb) with the reader or asker addressed, or without any contract word."""
    if not _request_shaped(sentence):
        return False
    person = bool(_PERSON.search(sentence))
    off_topic = not _CONTRACT_WORDS.search(sentence)
    if _TASK_VERB.match(sentence) or _QUESTION.match(sentence):
        return person or off_topic
    # A lower-case start is the middle of a clause cut at a line break ("(b) provide the Services").
    if not sentence[0].isupper() or sentence.split()[0].isupper():
        return False  # a clause cut at a line break, or a heading in capitals
    return (bool(_DUTY_VERB.match(sentence)) and person) or (bool(_ERRAND_VERB.match(sentence)) and off_topic)


def instruction_candidates(text: str) -> list[str]:
    """The sentences of `text` that could be an instruction planted for an assistant, for the
    learned detector to read (`rag.security.planted_model`): whole sentences, starting with a
    capital (not a heading in capitals), that address a person ("you", "my") or hold no contract
    word. About 7 % of a contract's sentences qualify, so the detector embeds few of them."""
    out = []
    for sentence in _sentences(_normal(text)):
        first = sentence.split()[0] if sentence.strip() else ""
        heading = first.isupper() and len(first) > 1  # "TERM AND TERMINATION", not "I need ..."
        if not _request_shaped(sentence) or not sentence[0].isupper() or heading:
            continue
        if _PERSON.search(sentence) or not _CONTRACT_WORDS.search(sentence):
            out.append(sentence)
    return list(dict.fromkeys(out))


def _normal(text: str) -> str:
    """NFKC with zero-width characters removed, so look-alike spellings read as the plain words."""
    text = unicodedata.normalize("NFKC", text)
    return re.sub("[\u200b-\u200f\u2060-\u2064\ufeff\u00ad]", "", text)


def planted_findings(text: str) -> list[str]:
    """Names of the planted-instruction shapes in `text` (see the module docstring), in a fixed
    order; empty for an ordinary passage."""
    if not text:
        return []
    text = _normal(text)
    found = [name for name, pattern in _STRONG.items() if pattern.search(text)]
    sentences = _sentences(text)
    if "reply_directive" not in found and any(_reply_order(sentence) for sentence in sentences):
        found.insert(0, "reply_directive")
    if any(_task_switch(sentence) for sentence in sentences):
        found.append("task_switch")
    return found


# Every name `planted_findings` can return, in report order.
PLANTED_SHAPES: tuple[str, ...] = (*_STRONG, "task_switch")

_LABELS = {
    "reply_directive": "gives orders about the assistant's reply",
    "chat_turn": "imitates a chat transcript (Assistant:/User: turns)",
    "addresses_an_ai": "addresses the reader as an AI",
    "outside_link": "links or embeds an outside address (markdown)",
    "code_to_run": "carries code to run",
    "output_transform": "asks to encode or transform the output",
    "planted_order": "gives orders to the reader (follow, before answering, when asked ...)",
    "task_switch": "gives the assistant another task",
    "learned_instruction": "reads as an instruction to an assistant (learned detector)",
}


def shape_label(name: str) -> str:
    """A reader's description of an injection finding (any name `injection_findings` returns)."""
    return _LABELS.get(name, name.replace("_", " "))
