
local r = store_task(TASK, MARK, INDEX, ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[8])
if r == 'created' then make_pending(INDEX, ARGV[7], ARGV[2], ARGV[4], ARGV[1]) end
return r
