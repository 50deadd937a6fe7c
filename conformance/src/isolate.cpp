// placeholder: crash isolation comes next
