package api

// routes registers every route of the server in one place.
func (s *Server) routes() {
	e := s.echo
	e.GET("/healthz", s.healthz)
	// Downloads take a signed link or a token.
	e.GET("/v1/files/:id/content", s.fileContent, s.audited, s.signedOrAuthenticated)
	e.POST("/v1/session", s.signIn, s.audited)

	v1 := e.Group("/v1", s.audited, s.authenticate)
	v1.GET("/session", s.session)
	v1.DELETE("/session", s.signOut)
	v1.POST("/files", s.uploadFile)
	v1.GET("/files", s.listFiles)
	v1.GET("/files/:id", s.getFile)
	v1.DELETE("/files/:id", s.deleteFile)
	v1.GET("/tables/:id", s.getTable)
	v1.GET("/tables/:id/rows", s.tableRows)
	v1.GET("/tables/:id/export", s.exportTable)
	v1.POST("/tables", s.declareTable)
	v1.GET("/tables/:id/labels", s.getLabels)
	v1.PUT("/tables/:id/labels", s.putLabels)
	v1.GET("/tools", s.listTools)
	v1.POST("/tools/:name", s.callTool)
	v1.GET("/approvals", s.listApprovals)
	v1.GET("/approvals/:id", s.getApproval)
	v1.POST("/approvals/:id/approve", s.decideApproval(true))
	v1.POST("/approvals/:id/reject", s.decideApproval(false))
	v1.GET("/audit", s.readAudit)
}
