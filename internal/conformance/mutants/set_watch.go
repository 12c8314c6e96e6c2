package main

// watchMutants break the rules of how `brighter watch` lays out its
// messages and rejections panels on a small screen: the rows are shared
// (a panel gives the other the rows it does not need), the rejections use
// the rows they have (one line each when they do not all fit with their
// messages), and a panel that leaves rows out says how many. And watch's
// -c/--config: taken, and without --target a usage error that says watch
// reads consume's --listen address, which the subscriptions file names
// none.
var watchMutants = []mutant{
	{Name: "watch-rejections-more-unsaid", What: "brighter watch's rejections panel leaves rejections out without saying so: the header counts five, one row is drawn, nothing says where the others went",
		File: "internal/tui/view_rejections.go",
		Old:  "\tif hidden := len(rs) - shown; hidden > 0 {\n",
		New:  "\tif hidden := len(rs) - shown; hidden > len(rs) {\n",
		Pkg:  "./internal/tui", Run: "^TestModel_Rejections_UseTheRowsTheyHave_AndSayHowManyMore$"},
	{Name: "watch-messages-more-unsaid", What: "brighter watch's messages panel leaves messages out without saying so",
		File: "internal/tui/view_messages.go",
		Old:  "\tif hidden := len(msgs) - shown; hidden > 0 {\n",
		New:  "\tif hidden := len(msgs) - shown; hidden > len(msgs) {\n",
		Pkg:  "./internal/tui", Run: "^TestModel_Messages_SayHowManyMore$"},
	{Name: "watch-rejections-never-compact", What: "brighter watch's rejections keep their message lines when they do not all fit: at 80x24 one or two rejections are drawn where four would fit",
		File: "internal/tui/view_rejections.go",
		Old:  "\tcompact := sum(heights) > rows\n",
		New:  "\tcompact := false\n",
		Pkg:  "./internal/tui", Run: "^TestModel_Rejections_UseTheRowsTheyHave_AndSayHowManyMore$"},
	{Name: "watch-messages-keep-unused-rows", What: "brighter watch's messages panel keeps its three fifths of the screen with nothing to draw in it while the rejections panel leaves rejections out",
		File: "internal/tui/view.go",
		Old:  "\tcase needM < rest*3/5:\n",
		New:  "\tcase false:\n",
		Pkg:  "./internal/tui", Run: "^TestModel_Panels_GiveTheRowsTheyDoNotNeed$"},
	{Name: "watch-rejections-keep-unused-rows", What: "brighter watch's rejections panel keeps its two fifths of the screen with nothing to draw in it while the messages panel leaves messages out",
		File: "internal/tui/view.go",
		Old:  "\tcase needR < rest-rest*3/5:\n",
		New:  "\tcase false:\n",
		Pkg:  "./internal/tui", Run: "^TestModel_Panels_GiveTheRowsTheyDoNotNeed$"},
	{Name: "watch-cursor-scrolls-past-rejections", What: "brighter watch's rejections panel draws its first rows whatever the cursor: the rejections left out cannot be reached",
		File: "internal/tui/view_rejections.go",
		Old:  "\tfor start < cursor && sum(heights[start:cursor+1]) > budget {\n",
		New:  "\tfor false {\n",
		Pkg:  "./internal/tui", Run: "^TestModel_Rejections_UseTheRowsTheyHave_AndSayHowManyMore$"},
	{Name: "watch-config-flag-unknown", What: "brighter watch takes no -c/--config: `watch -c s.yaml` fails with cobra's unknown shorthand flag 'c' though every other command takes it",
		File: "internal/cmd/watch/watch.go",
		Old:  "\tcmd.Flags().StringVarP(&o.config, \"config\", \"c\", \"\", \"subscriptions file: not read by watch, which needs --target\")\n",
		New:  "\n",
		Pkg:  "./internal/cmd/watch", Run: "^TestWatch_ConfigWithoutTarget_SaysToGiveTheListenAddress$"},
	{Name: "watch-config-silently-ignored", What: "brighter watch -c s.yaml without --target watches the default address as if the file had been read: the user's file is ignored without a word",
		File: "internal/cmd/watch/watch.go",
		Old:  "\tif !configSet || targetSet {\n",
		New:  "\tif true {\n",
		Pkg:  "./internal/cmd/watch", Run: "^TestWatch_ConfigWithoutTarget_SaysToGiveTheListenAddress$"},
	{Name: "watch-config-with-target-refused", What: "brighter watch -c s.yaml -t HOST:PORT is refused: a script passing -c to every command cannot watch the target it names",
		File: "internal/cmd/watch/watch.go",
		Old:  "\tif !configSet || targetSet {\n",
		New:  "\tif !configSet {\n",
		Pkg:  "./internal/cmd/watch", Run: "^TestWatch_ConfigWithTarget_WatchesTheTarget$"},
}
