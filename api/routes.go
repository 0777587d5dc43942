package api

import (
	"net/http"

	"github.com/labstack/echo/v5"
)

// routes registers every route of the server in one place.
func (s *Server) routes() {
	e := s.echo
	e.Pre(s.relay)
	e.Use(s.metrics.http)
	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	e.GET("/metrics", s.metrics.handler())

	// The web page: server-rendered, signed in by cookie.
	e.GET("/", func(c *echo.Context) error { return c.Redirect(http.StatusSeeOther, "/files") })
	e.GET("/static/style.css", s.web.Stylesheet)
	e.GET("/static/upload.js", s.web.Script)
	e.GET("/signin", s.web.SignInPage)
	e.POST("/signin", s.web.SignInForm, s.audited, s.sameSite)
	page := []echo.MiddlewareFunc{s.audited, s.pageAuth}
	// Pages and exports that read: every query of one shares its deadline.
	read := []echo.MiddlewareFunc{s.audited, s.pageAuth, s.withinQueryTimeout}
	e.POST("/signout", s.web.SignOutForm, page...)
	e.GET("/files", s.web.FilesPage, read...)
	// The upload reads its form as a stream, after the policy is asked.
	e.POST("/files/upload", s.web.UploadForm, s.audited, s.streamedPageAuth)
	e.POST("/files/:id/delete", s.web.DeleteForm, page...)
	e.GET("/tables/:id", s.web.TablePage, read...)
	e.GET("/tables/:id/export", s.web.TableViewExport, read...)
	e.POST("/tables/:id/reread", s.web.RereadForm, page...)
	e.POST("/tables/:id/views", s.web.SaveViewForm, page...)
	e.GET("/tables/:id/group.svg", s.web.GroupFile("svg"), read...)
	e.GET("/tables/:id/group.png", s.web.GroupFile("png"), read...)
	e.GET("/tables/:id/group.xlsx", s.web.GroupFile("xlsx"), read...)
	e.GET("/approvals", s.web.ApprovalsPage, read...)
	e.GET("/approvals/:id", s.web.ApprovalDetailPage, read...)
	e.POST("/approvals/:id/approve", s.web.DecideApprovalForm(true), page...)
	e.POST("/approvals/:id/reject", s.web.DecideApprovalForm(false), page...)
	// Downloads take a signed link or a token.
	e.GET("/v1/files/:id/content", s.fileContent, s.audited, s.signedOrAuthenticated)
	// HEAD, as link checkers and download managers ask before they fetch.
	e.HEAD("/v1/files/:id/content", s.fileContent, s.audited, s.signedOrAuthenticated)
	e.POST("/v1/session", s.signIn, s.audited, s.sameSite)
	// The Model Context Protocol's streamable HTTP transport, by bearer
	// token like every other call.
	e.Any("/mcp", s.mcp.Handle(), s.mcp.Authenticate)

	// The JSON API.
	v1 := e.Group("/v1", s.audited, s.authenticate)
	v1.GET("/session", s.session)
	v1.DELETE("/session", s.signOut)
	v1.POST("/files", s.rest.UploadFile)
	v1.GET("/files", s.rest.ListFiles)
	v1.GET("/files/:id", s.rest.GetFile)
	v1.DELETE("/files/:id", s.rest.DeleteFile)
	v1.POST("/files/:id/read", s.rest.ReadAgain)
	v1.GET("/tables/:id", s.rest.GetTable)
	// Reads of rows run the caller's filters: every statement of one shares
	// its deadline, as the pages' do.
	v1.GET("/tables/:id/rows", s.rest.TableRows, s.withinQueryTimeout)
	v1.GET("/tables/:id/export", s.rest.ExportTable, s.withinQueryTimeout)
	v1.POST("/tables", s.rest.DeclareTable)
	v1.GET("/tables/:id/labels", s.rest.GetLabels)
	v1.PUT("/tables/:id/labels", s.rest.PutLabels)
	v1.GET("/tools", s.rest.ListTools)
	v1.POST("/tools/:name", s.rest.CallTool)
	v1.GET("/approvals", s.rest.ListApprovals)
	v1.GET("/approvals/:id", s.rest.GetApproval)
	v1.POST("/approvals/:id/approve", s.rest.DecideApproval(true))
	v1.POST("/approvals/:id/reject", s.rest.DecideApproval(false))
	v1.GET("/audit", s.rest.ReadAudit)
	// Between the nodes of a cluster only.
	v1.POST("/cluster/sessions", s.clusterSession)
	// Moving owners between nodes: `datadesk nodes apply`, with the
	// cluster key.
	moves := e.Group("/v1/cluster", s.peerOnly)
	moves.POST("/placement", s.reloadPlacement)
	moves.GET("/owners/:id/archive", s.sendOwner)
	moves.PUT("/owners/:id/archive", s.receiveOwner)
	moves.POST("/owners/:id/resume", s.resumeOwner)
	moves.POST("/owners/:id/release", s.releaseOwner)
}
