-- As the authored corpus's references: a definition list's term as a bold paragraph,
-- its definitions' blocks after it.
function DefinitionList(el)
  local out = {}
  for _, item in ipairs(el.content) do
    table.insert(out, pandoc.Para({pandoc.Strong(item[1])}))
    for _, def in ipairs(item[2]) do
      for _, block in ipairs(def) do
        table.insert(out, block)
      end
    end
  end
  return out
end
