"""The course's machinery, apart from the model it teaches.

`lib/` holds what a chapter teaches (data, gru, encoder, decoder, head, model, train, search,
bleu, and the chapters' small experiments); this package holds what makes a course of it:
checkpoints, downloads and releases of the trained models, cached experiment runs, links,
notebook glue and the Playground's export. Importing it does nothing.
"""
