// placeholder: expectation files come next
