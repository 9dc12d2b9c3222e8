"""The sentences a chapter writes from its own measurements, one small function each.

`wording` holds the words that are not about one chapter (directions, comparisons, counts,
intervals, timings); each other module holds one chapter's sentences and is named after its file
in book/: `tensors`, `encoder`, `decoder`, `prediction_head`, `teacher_forcing`, `beam_search`,
`bleu`, `wrap_up`, `attention`. A chapter imports its own module,

    from lib.course.verdicts import encoder as verdicts, wording

and glues what `verdicts.gru_against_vanilla(...)` returns. Importing this package does nothing.
"""
