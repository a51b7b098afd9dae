-- Pandoc filter for scripts/book.sh: links between the book's Markdown pages
-- point to their HTML pages ("08-softmax.md#x" becomes "08-softmax.html#x");
-- links into the repository ("../examples/book/softmax.cpp") are left alone.
function Link(link)
  link.target = link.target:gsub("^([%w%-]+)%.md(#?)", "%1.html%2")
  return link
end
